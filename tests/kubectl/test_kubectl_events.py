"""The real kubectl 1.33 against events.k8s.io/v1: `kubectl get events.events.k8s.io` prints
the server's Event columns (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; SUBOBJECT, SOURCE,
FIRST SEEN, COUNT, NAME with -o wide) for events written at either version, `-o json` reads
the events.k8s.io/v1 shape, and `kubectl api-resources` lists the group."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl
VERSION = "1.33"
BINARY = kubectl_binary(VERSION)
if BINARY is None:
    pytest.skip(f"kubectl.{VERSION} is not installed", allow_module_level=True)


@pytest.fixture
def kubectl(server: HttpServer, tmp_path: Path) -> Kubectl:
    assert BINARY is not None
    return Kubectl(BINARY, VERSION, server.kubeconfig_path, tmp_path / "kube-cache")


def _rows(text: str) -> list[dict[str, str]]:
    """kubectl's table as one dict per row, cells cut at the header's column starts."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    starts = [s for s in starts if s == 0 or header[s - 2] == " "]
    bounds = [*starts[1:], None]
    names = [header[s:e].strip() for s, e in zip(starts, bounds, strict=True)]
    return [
        {n: line[s:e].strip() for n, s, e in zip(names, starts, bounds, strict=True)}
        for line in lines[1:]
    ]


SCHEDULED: Obj = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "web.1", "namespace": "default"},
    "eventTime": "2026-12-08T00:00:00.000000Z",
    "series": {"count": 4, "lastObservedTime": "2026-12-08T00:00:00.000000Z"},
    "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-node-0",
    "action": "Scheduling",
    "reason": "Scheduled",
    "regarding": {"kind": "Pod", "namespace": "default", "name": "web"},
    "note": "Successfully assigned default/web to node-0",
    "type": "Normal",
}
STARTING: Obj = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "node-0.1", "namespace": "default"},
    "involvedObject": {"kind": "Node", "name": "node-0"},
    "reason": "Starting",
    "message": "Starting kubelet.",
    "source": {"component": "kubelet", "host": "node-0"},
    "count": 1,
    "type": "Warning",
}


async def _seed(server: HttpServer) -> None:
    client = server.client()
    await client.create(kinds.EVENTS_V1, SCHEDULED)
    await client.create(kinds.EVENTS, STARTING)


async def test_get_columns(kubectl: Kubectl, server: HttpServer) -> None:
    await _seed(server)

    rows = _rows(await kubectl.run("get", "events.events.k8s.io", "--sort-by=metadata.name"))
    wide = _rows(
        await kubectl.run("get", "events.events.k8s.io", "-o", "wide", "--sort-by=metadata.name")
    )

    assert [list(r)[:5] for r in rows] == [["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]] * 2
    assert [(r["TYPE"], r["REASON"], r["OBJECT"], r["MESSAGE"]) for r in rows] == [
        ("Warning", "Starting", "node/node-0", "Starting kubelet."),
        ("Normal", "Scheduled", "pod/web", "Successfully assigned default/web to node-0"),
    ]
    assert [(r["SOURCE"], r["COUNT"], r["NAME"]) for r in wide] == [
        ("kubelet, node-0", "1", "node-0.1"),
        ("default-scheduler, default-scheduler-node-0", "4", "web.1"),
    ]


async def test_get_json_is_the_v1_shape(kubectl: Kubectl, server: HttpServer) -> None:
    await _seed(server)

    body = orjson.loads(await kubectl.run("get", "events.events.k8s.io", "node-0.1", "-o", "json"))

    assert body["apiVersion"] == "events.k8s.io/v1"
    assert body["regarding"] == {"kind": "Node", "name": "node-0"}
    assert (body["note"], body["deprecatedCount"]) == ("Starting kubelet.", 1)
    assert body["deprecatedSource"] == {"component": "kubelet", "host": "node-0"}


async def test_api_resources(kubectl: Kubectl) -> None:
    out = await kubectl.run("api-resources", "--api-group=events.k8s.io", "--no-headers")

    assert out.split() == ["events", "ev", "events.k8s.io/v1", "true", "Event"]
