"""meta.k8s.io Table responses over HTTPS: columns and cells per kind, ages, includeObject,
PartialObjectMetadata, and kubectl's duration format."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.apiserver.printers import claim_state
from draplane.apiserver.tables import human_duration
from draplane.testing.builders import (
    make_claim,
    make_class,
    make_node,
    make_pod,
    make_scheduling_context,
    make_template,
)
from draplane.testing.clock import FakeClock
from draplane.testing.httpserver import HttpServer

TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
KUBECTL_ACCEPT = f"{TABLE_V1},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


@pytest.fixture
def server_options(clock: FakeClock) -> dict[str, Any]:
    return {"clock": clock}


async def _table(
    http: aiohttp.ClientSession, path: str, accept: str = KUBECTL_ACCEPT, **params: str
) -> dict[str, Any]:
    async with http.get(path, headers={"Accept": accept}, params=params) as resp:
        assert resp.status == 200, await resp.text()
        result: dict[str, Any] = orjson.loads(await resp.read())
        return result


def _path(rt: ResourceType, namespace: str = "default") -> str:
    base = "/api/v1" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    return (
        f"{base}/namespaces/{namespace}/{rt.resource}" if rt.namespaced else f"{base}/{rt.resource}"
    )


_RUNNING_POD = (
    make_pod("web")
    .node("node-0")
    .phase("Running")
    .set("status.podIP", "10.0.0.5")
    .set(
        "status.containerStatuses",
        [
            {
                "name": "ctr",
                "ready": True,
                "restartCount": 2,
                "state": {"running": {}},
                "image": "i",
                "imageID": "",
                "started": True,
            }
        ],
    )
)


@pytest.mark.parametrize(
    ("rt", "objs", "columns", "cells"),
    [
        pytest.param(
            kinds.PODS,
            [_RUNNING_POD.obj()],
            [
                "Name",
                "Ready",
                "Status",
                "Restarts",
                "Age",
                "IP",
                "Node",
                "Nominated Node",
                "Readiness Gates",
            ],
            ["web", "1/1", "Running", "2", "3m2s", "10.0.0.5", "node-0", "<none>", "<none>"],
            id="pod-running",
        ),
        pytest.param(
            kinds.PODS,
            [make_pod("p").obj()],
            None,
            ["p", "0/1", "Pending", "0", "3m2s", "<none>", "<none>", "<none>", "<none>"],
            id="pod-pending",
        ),
        pytest.param(
            kinds.NODES,
            [
                make_node("n")
                .set("status.conditions", [{"type": "Ready", "status": "True"}])
                .set("status.nodeInfo", {"kubeletVersion": "v1.28.0"})
                .label("node-role.kubernetes.io/worker", "")
                .unschedulable()
                .obj()
            ],
            [
                "Name",
                "Status",
                "Roles",
                "Age",
                "Version",
                "Internal-IP",
                "External-IP",
                "OS-Image",
                "Kernel-Version",
                "Container-Runtime",
            ],
            [
                "n",
                "Ready,SchedulingDisabled",
                "worker",
                "3m2s",
                "v1.28.0",
                "<none>",
                "<none>",
                "<unknown>",
                "<unknown>",
                "<unknown>",
            ],
            id="node",
        ),
        pytest.param(
            kinds.RESOURCE_CLAIMS,
            [make_claim("c").obj()],
            ["Name", "ResourceClassName", "AllocationMode", "State", "Age"],
            ["c", "example", "WaitForFirstConsumer", "pending", "3m2s"],
            id="claim",
        ),
        pytest.param(
            kinds.RESOURCE_CLAIM_TEMPLATES,
            [make_template("t").obj()],
            ["Name", "ResourceClassName", "AllocationMode", "Age"],
            ["t", "example", "WaitForFirstConsumer", "3m2s"],
            id="claim-template",
        ),
        pytest.param(
            kinds.RESOURCE_CLASSES,
            [make_class("example").obj()],
            ["Name", "DriverName", "Age"],
            ["example", "driver.example.com", "3m2s"],
            id="resource-class",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            [{"metadata": {"name": "cm", "namespace": "default"}, "data": {"a": "1", "b": "2"}}],
            ["Name", "Data", "Age"],
            ["cm", 2, "3m2s"],
            id="configmap",
        ),
        pytest.param(
            kinds.LEASES,
            [{"metadata": {"name": "l", "namespace": "default"}, "spec": {"holderIdentity": "me"}}],
            ["Name", "Holder", "Age"],
            ["l", "me", "3m2s"],
            id="lease",
        ),
    ],
)
async def test_table_columns_and_cells(
    server: HttpServer,
    http: aiohttp.ClientSession,
    clock: FakeClock,
    rt: ResourceType,
    objs: list[dict[str, Any]],
    columns: list[str] | None,
    cells: list[Any],
) -> None:
    client = server.client()
    for obj in objs:
        created = await client.create(rt, {k: v for k, v in obj.items() if k != "status"})
        if "status" in obj and "status" in rt.subresources:
            await client.update(rt, {**created, "status": obj["status"]}, subresource="status")
    clock.step(182)

    table = await _table(http, _path(rt))

    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    if columns is not None:
        assert [c["name"] for c in table["columnDefinitions"]] == columns
    assert table["columnDefinitions"][0]["format"] == "name"
    assert [r["cells"] for r in table["rows"]] == [cells]
    assert table["metadata"]["resourceVersion"]


async def test_wide_columns_have_priority_one(http: aiohttp.ClientSession) -> None:
    table = await _table(http, _path(kinds.PODS))

    assert {c["name"]: c["priority"] for c in table["columnDefinitions"]}["Node"] == 1
    assert {c["name"]: c["priority"] for c in table["columnDefinitions"]}["Status"] == 0
    assert table["rows"] == []


async def test_namespace_and_event_tables(
    server: HttpServer, http: aiohttp.ClientSession, clock: FakeClock
) -> None:
    client = server.client()
    pod = await client.create(kinds.PODS, make_pod("p").obj())
    await client.create(
        kinds.EVENTS,
        {
            "metadata": {"name": "p.1", "namespace": "default"},
            "involvedObject": {
                "kind": "Pod",
                "name": "p",
                "namespace": "default",
                "uid": pod["metadata"]["uid"],
            },
            "reason": "ClaimsPrepared",
            "message": "prepared ",
            "type": "Normal",
            "firstTimestamp": "2025-12-31T23:59:00Z",
            "lastTimestamp": "2025-12-31T23:59:30Z",
            "count": 3,
            "source": {"component": "kubelet", "host": "node-0"},
        },
    )

    namespaces = await _table(http, "/api/v1/namespaces")
    events = await _table(http, _path(kinds.EVENTS))

    assert ["default", "Active", "0s"] in [r["cells"] for r in namespaces["rows"]]
    assert [c["name"] for c in events["columnDefinitions"] if c["priority"] == 0] == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Message",
    ]
    assert events["rows"][0]["cells"] == [
        "30s",
        "Normal",
        "ClaimsPrepared",
        "pod/p",
        "",
        "kubelet, node-0",
        "prepared",
        "60s",
        3,
        "p.1",
    ]


async def test_scheduling_context_table(server: HttpServer, http: aiohttp.ClientSession) -> None:
    pod = await server.client().create(kinds.PODS, make_pod("p").obj())
    await server.client().create(
        kinds.POD_SCHEDULING_CONTEXTS, make_scheduling_context(pod).selected_node("node-1").obj()
    )

    table = await _table(http, _path(kinds.POD_SCHEDULING_CONTEXTS))

    assert [r["cells"] for r in table["rows"]] == [["p", "node-1", "0s"]]


@pytest.mark.parametrize(
    ("include", "expected_kind"),
    [
        pytest.param(None, "PartialObjectMetadata", id="default-metadata"),
        pytest.param("Object", "ConfigMap", id="object"),
        pytest.param("None", None, id="none"),
    ],
)
async def test_include_object(
    server: HttpServer, http: aiohttp.ClientSession, include: str | None, expected_kind: str | None
) -> None:
    await server.client().create(
        kinds.CONFIGMAPS, {"metadata": {"name": "x", "namespace": "default", "labels": {"l": "v"}}}
    )
    params = {"includeObject": include} if include else {}

    table = await _table(http, _path(kinds.CONFIGMAPS), **params)

    row_object = table["rows"][0]["object"]
    assert (row_object or {}).get("kind") == expected_kind
    if row_object is not None:
        assert row_object["metadata"]["labels"] == {"l": "v"}


async def test_single_object_table_and_v1beta1(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(
        kinds.CONFIGMAPS, {"metadata": {"name": "x", "namespace": "default"}}
    )

    table = await _table(
        http,
        _path(kinds.CONFIGMAPS) + "/x",
        accept="application/json;as=Table;v=v1beta1;g=meta.k8s.io",
    )

    assert table["apiVersion"] == "meta.k8s.io/v1beta1"
    assert [r["cells"][0] for r in table["rows"]] == ["x"]


async def test_partial_object_metadata_list(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(
        kinds.CONFIGMAPS,
        {"metadata": {"name": "x", "namespace": "default"}, "data": {"secret": "s"}},
    )

    listing = await _table(
        http,
        _path(kinds.CONFIGMAPS),
        accept="application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    )

    assert listing["kind"] == "PartialObjectMetadataList"
    assert [(i["kind"], i["metadata"]["name"], "data" in i) for i in listing["items"]] == [
        ("PartialObjectMetadata", "x", False)
    ]


async def test_unservable_accept_is_406(http: aiohttp.ClientSession) -> None:
    async with http.get(
        _path(kinds.CONFIGMAPS), headers={"Accept": "application/json;as=Table;v=v9;g=meta.k8s.io"}
    ) as resp:
        status = orjson.loads(await resp.read())

    assert (resp.status, status["reason"]) == (406, "NotAcceptable")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(-5, "<invalid>", id="future"),
        pytest.param(-1, "0s", id="clock-skew"),
        pytest.param(5, "5s", id="seconds"),
        pytest.param(119, "119s", id="under-two-minutes"),
        pytest.param(182, "3m2s", id="minutes-and-seconds"),
        pytest.param(240, "4m", id="whole-minutes"),
        pytest.param(15 * 60, "15m", id="minutes"),
        pytest.param(4 * 3600, "4h", id="hours"),
        pytest.param(5 * 3600 + 60 * 7, "5h7m", id="hours-and-minutes"),
        pytest.param(30 * 3600, "30h", id="under-two-days"),
        pytest.param(2 * 86400, "2d", id="days"),
        pytest.param(3 * 86400 + 5 * 3600, "3d5h", id="days-and-hours"),
        pytest.param(100 * 86400, "100d", id="many-days"),
        pytest.param(3 * 365 * 86400 + 10 * 86400, "3y10d", id="years-and-days"),
        pytest.param(9 * 365 * 86400, "9y", id="years"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


@pytest.mark.parametrize(
    ("claim", "state"),
    [
        pytest.param(make_claim("c").obj(), "pending", id="pending"),
        pytest.param(make_claim("c").allocation(node="n").obj(), "allocated", id="allocated"),
        pytest.param(
            make_claim("c").allocation(node="n").reserved_for(make_pod().obj()).obj(),
            "allocated,reserved",
            id="allocated-reserved",
        ),
        pytest.param(
            make_claim("c").allocation().deallocation_requested().obj(),
            "allocated,deallocating",
            id="deallocation-requested",
        ),
        pytest.param(make_claim("c").deletion_timestamp().obj(), "deleted", id="deleted-pending"),
        pytest.param(
            make_claim("c").allocation().deletion_timestamp().obj(),
            "deleted,allocated,deallocating",
            id="deleted-allocated",
        ),
    ],
)
def test_claim_state(claim: dict[str, Any], state: str) -> None:
    assert claim_state(claim) == state
