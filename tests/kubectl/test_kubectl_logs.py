"""The real kubectl binaries against `pods/log`: `logs -c`, `--tail`, `--timestamps`,
`--previous`, `-f` until the container terminates, and the message for a pod with several
containers."""

from __future__ import annotations

import asyncio

import pytest

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.testing.apistate import seed_objects, wait_for
from draplane.testing.builders import make_pod
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)

STARTED, FINISHED = "2026-01-01T00:00:05Z", "2026-01-01T00:00:35Z"


def status(name: str, *, restarted: bool = False) -> Obj:
    last = {
        "exitCode": 1,
        "reason": "Error",
        "startedAt": STARTED,
        "finishedAt": FINISHED,
        "containerID": f"containerd://{name}-0",
    }
    return {
        "name": name,
        "image": "busybox:1.36",
        "imageID": "",
        "containerID": f"containerd://{name}-{int(restarted)}",
        "ready": True,
        "started": True,
        "restartCount": int(restarted),
        "state": {"running": {"startedAt": FINISHED if restarted else STARTED}},
        "lastState": {"terminated": last} if restarted else {},
    }


async def test_kubectl_logs(kubectl: Kubectl, server: HttpServer) -> None:
    pod = (
        make_pod("web")
        .node("node-0")
        .set("spec.containers", [{"name": "app", "image": "busybox:1.36"}])
        .container("sidecar", "busybox:1.36")
        .env("MODE", "fast")
        .phase("Running")
        .set("status.containerStatuses", [status("app", restarted=True), status("sidecar")])
        .obj()
    )
    client = server.client()
    await seed_objects(client, pod)

    unnamed = await kubectl.run("logs", "pod/web", "--all-containers=false", check=False)
    full = await kubectl.run("logs", "web", "-c", "app")
    tail = await kubectl.run("logs", "web", "-c", "app", "--tail=1", "--timestamps")
    previous = await kubectl.run("logs", "web", "-c", "app", "--previous", "--tail=1")
    follow = asyncio.create_task(kubectl.run("logs", "-f", "web", "-c", "sidecar", "--tail=1"))
    await wait_for(lambda: server.server.active_watches == 1, timeout=30, what="kubectl logs -f")
    stored = await client.get(kinds.PODS, "web", "default")
    stored["status"]["containerStatuses"][1]["state"] = {
        "terminated": {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": STARTED,
            "finishedAt": FINISHED,
            "containerID": "containerd://sidecar-0",
        }
    }
    await client.update(kinds.PODS, stored, subresource="status")
    followed = await asyncio.wait_for(follow, timeout=30)

    # kubectl picks the first container when none is named, and says so on stderr.
    assert "HOSTNAME=web" in unnamed
    assert full.splitlines() == [
        "draplane: container app (image busybox:1.36) started on node node-0",
        "HOSTNAME=web",
        "MODE=fast",
    ]
    assert tail == "2026-01-01T00:00:35.000000000Z MODE=fast\n"
    assert previous == "draplane: container app exited with code 1 (Error)\n"
    assert followed.splitlines() == [
        "HOSTNAME=web",
        "draplane: container sidecar exited with code 0 (Completed)",
    ]
