"""A kubelet plugin draplane did not write, pointed at a draplane node with the flags of
upstream's kubeletplugin helper: `tests/kubeletapi/independent_plugin.py` implements the
registration and DRA v1 services from the protos alone and talks HTTPS to the API server with
the node's kubeconfig. It registers, publishes its slice, a pod using its DeviceClass runs with
the plugin's CDI env in `kubectl logs`, and deleting the pod unprepares the claim."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.rest import RESTClient
from draplane.testing.apistate import wait_for
from draplane.testing.commands import Commands, free_port
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PLUGIN = Path(__file__).resolve().parents[1] / "kubeletapi" / "independent_plugin.py"
DRIVER = "indep.example.com"
NODE = "node-0"
TIMEOUT = 120.0

MANIFESTS = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: indep
spec:
  selectors:
  - cel:
      expression: device.driver == "{DRIVER}"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-indep
  namespace: default
spec:
  spec:
    devices:
      requests:
      - name: dev
        exactly:
          deviceClassName: indep
---
apiVersion: v1
kind: Pod
metadata:
  name: indep-pod
  namespace: default
spec:
  containers:
  - name: ctr
    image: registry.k8s.io/e2e-test-images/busybox:1.36.1-1
    command: ["sh", "-c", "env; sleep 3600"]
    resources:
      claims:
      - name: dev
  resourceClaims:
  - name: dev
    resourceClaimTemplateName: one-indep
"""


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    started = Commands(tmp_path / "logs")
    try:
        yield started
    finally:
        await started.close()


@pytest.fixture
def kubelet_dir() -> Iterator[Path]:
    # Unix socket paths are short (108 bytes): the kubelet directory sits directly in /tmp.
    directory = Path(tempfile.mkdtemp(prefix="ki", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def calls(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_independent_plugin_process_runs_a_pod(
    commands: Commands, tmp_path: Path, kubelet_dir: Path
) -> None:
    binary = kubectl_binary("1.33")
    if binary is None:
        pytest.skip("kubectl 1.33 is not installed")
    data_dir, port = tmp_path / "data", free_port()
    apiserver = await commands.start(
        "apiserver", "--data-dir", str(data_dir), "--port", str(port), "--store", "memory"
    )
    await apiserver.wait_for_line("draplane apiserver listening on", timeout=TIMEOUT)
    admin = str(data_dir / "kubeconfig")
    await commands.start("scheduler", "--kubeconfig", admin)
    await commands.start("controller-manager", "--kubeconfig", admin)
    await commands.start(
        "nodes", "--kubeconfig", admin, "--count", "1", "--data-dir", str(data_dir),
        "--kubelet-dir", str(kubelet_dir),
    )  # fmt: skip
    node_dir = kubelet_dir / NODE
    await wait_for((node_dir / "kubeconfig").exists, what="the node's kubeconfig", timeout=TIMEOUT)
    calls_file = tmp_path / "calls.jsonl"
    stderr = (tmp_path / "plugin.stderr").open("wb")
    command = [
        sys.executable, "-u", str(PLUGIN), "--driver-name", DRIVER,
        "--plugin-registration-path", str(node_dir / "plugins_registry"),
        "--plugin-data-dir", str(node_dir / "plugins" / DRIVER),
        "--cdi-dir", str(node_dir / "cdi"),
        "--node-name", NODE,
        "--kubeconfig", str(node_dir / "kubeconfig"),
        "--calls-file", str(calls_file),
    ]  # fmt: skip
    plugin = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=stderr
    )
    restarted: list[int] = []
    client = RESTClient.from_kubeconfig(data_dir / "kubeconfig")
    kubectl = Kubectl(binary, "1.33", data_dir / "kubeconfig", tmp_path / "kube-cache")
    try:
        assert plugin.stdout is not None
        lines: list[str] = []

        async def registered() -> bool:
            assert plugin.stdout is not None
            line = (await plugin.stdout.readline()).decode()
            if not line:
                raise AssertionError(f"plugin exited: {(tmp_path / 'plugin.stderr').read_text()}")
            lines.append(line.strip())
            return line.startswith("registration:")

        await wait_for(registered, what="NotifyRegistrationStatus", timeout=TIMEOUT)
        assert lines[-1] == "registration: registered=True error=''"

        [slice_] = (await client.list(kinds.RESOURCE_SLICES))["items"]
        node = await client.get(kinds.NODES, NODE)
        assert slice_["spec"]["nodeName"] == NODE
        assert [o["uid"] for o in slice_["metadata"]["ownerReferences"]] == [meta.uid(node)]

        await kubectl.run("apply", "-f", "-", stdin=MANIFESTS)

        async def running() -> Obj | None:
            pod = await client.get(kinds.PODS, "indep-pod", "default")
            return pod if (pod.get("status") or {}).get("phase") == "Running" else None

        await wait_for(running, what="the pod Running", timeout=TIMEOUT)
        [claim] = (await client.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
        [result] = claim["status"]["allocation"]["devices"]["results"]
        logs = (await kubectl.run("logs", "indep-pod")).splitlines()
        assert f"INDEP_DEVICE={result['device']}" in logs
        assert f"INDEP_CLAIM={meta.name(claim)}" in logs
        ref = ["default", meta.name(claim), meta.uid(claim)]
        assert calls(calls_file) == [{"call": "prepare", "claims": [ref]}]

        await kubectl.run("delete", "pod", "indep-pod", "--wait=false")

        async def unprepared() -> list[dict[str, object]] | None:
            found = calls(calls_file)
            return found if len(found) > 1 else None

        found = await wait_for(unprepared, what="NodeUnprepareResources", timeout=TIMEOUT)
        assert found[1] == {"call": "unprepare", "claims": [ref]}
        assert list((node_dir / "cdi").iterdir()) == []

        # The conformance harness, as a driver author runs it, on the same plugin: with the
        # node running and a command to restart the plugin it kills, every check runs.
        checked = await commands.run(
            "driver-check", "--kubelet-dir", str(kubelet_dir), "--node-name", NODE,
            "--driver", DRIVER, "--kubeconfig", admin, "-o", "json",
            "--plugin-command", shlex.join(command),
            timeout=TIMEOUT,
        )  # fmt: skip
        report = json.loads(checked.stdout)
        checks = {c["name"]: c for c in report["checks"]}
        restarted += [
            int(line.split("pid ")[1].split(",")[0])
            for line in checks["plugin-restart"]["evidence"]
            if line.startswith("restarted with --plugin-command")
        ]
        assert checked.code == 0, checked.stdout + checked.stderr
        assert {name: c["status"] for name, c in checks.items()} == dict.fromkeys(checks, "pass")
        assert len(checks) == 9
        assert await asyncio.wait_for(plugin.wait(), 10) == -signal.SIGKILL
        [event] = [e for e in checks["prepare-error-event"]["evidence"] if "event" in e]
        assert "is not allocatable" in event
    finally:
        await client.close()
        if plugin.returncode is None:
            plugin.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(plugin.wait(), 10)
        if plugin.returncode is None:
            plugin.kill()
            await plugin.wait()
        stderr.close()
        for pid in restarted:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)  # the shell and the plugin it started
