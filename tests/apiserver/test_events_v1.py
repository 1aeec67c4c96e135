"""events.k8s.io/v1 Events through the real HTTPS path, in both modes: one resource with core/v1
Events (written at either version, read at either), converted on list and watch, patched as
client-go's events broadcaster patches a series, selected by upstream's field labels, deleted at
either version, posted in protobuf, listed in discovery and OpenAPI."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds, versions
from draplane.api.meta import Obj

from .events_v1 import (
    CORE,
    EV1,
    LATER,
    NOW,
    STRATEGIC,
    call,
    core_event,
    event_v1,
    path,
)


@pytest.fixture(params=[versions.CLASSIC, versions.STRUCTURED], ids=["1.28", "1.36"])
def server_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    return {"mode": request.param}


async def test_created_as_v1_reads_as_core(http: aiohttp.ClientSession) -> None:
    code, created = await call(http, "POST", path(EV1), event_v1())
    assert code == 201, created
    code, core = await call(http, "GET", path(CORE, "e"))

    assert code == 200
    assert (created["apiVersion"], core["apiVersion"]) == ("events.k8s.io/v1", "v1")
    assert created["metadata"]["uid"] == core["metadata"]["uid"]
    assert core["involvedObject"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "web",
        "uid": "u1",
    }
    assert core["message"] == "Successfully assigned default/web to node-0"
    assert core["reportingComponent"] == "default-scheduler"
    assert core["reportingInstance"] == "default-scheduler-node-0"
    assert (core["eventTime"], core["action"], core["reason"]) == (NOW, "Scheduling", "Scheduled")
    assert (core["firstTimestamp"], core["lastTimestamp"], core["source"]) == (None, None, {})
    assert "note" not in core and "regarding" not in core


async def test_created_as_core_reads_as_v1(http: aiohttp.ClientSession) -> None:
    code, _ = await call(http, "POST", path(CORE), core_event())
    assert code == 201
    code, v1 = await call(http, "GET", path(EV1, "c"))

    assert code == 200
    assert v1["apiVersion"] == "events.k8s.io/v1"
    assert v1["regarding"] == {"kind": "Node", "name": "node-0"}
    assert v1["note"] == "Starting kubelet."
    assert v1["deprecatedSource"] == {"component": "kubelet", "host": "node-0"}
    assert v1["deprecatedFirstTimestamp"] == "2026-12-08T00:00:00Z"
    assert v1["deprecatedLastTimestamp"] == "2026-12-08T00:01:00Z"
    assert v1["deprecatedCount"] == 3
    assert v1["eventTime"] is None
    # Empty in core/v1, omitted by events.k8s.io/v1 (omitempty).
    assert "reportingController" not in v1 and "reportingInstance" not in v1
    for core_only in ("involvedObject", "message", "source", "count", "reportingComponent"):
        assert core_only not in v1


async def test_list_in_both_versions(http: aiohttp.ClientSession) -> None:
    await call(http, "POST", path(EV1), event_v1())
    await call(http, "POST", path(CORE), core_event())

    _, v1 = await call(http, "GET", path(EV1))
    _, core = await call(http, "GET", path(CORE))

    assert (v1["apiVersion"], v1["kind"]) == ("events.k8s.io/v1", "EventList")
    assert [(i["apiVersion"], i["metadata"]["name"]) for i in v1["items"]] == [
        ("events.k8s.io/v1", "c"),
        ("events.k8s.io/v1", "e"),
    ]
    assert [i["regarding"]["name"] for i in v1["items"]] == ["node-0", "web"]
    assert [i["involvedObject"]["name"] for i in core["items"]] == ["node-0", "web"]
    assert v1["metadata"]["resourceVersion"] == core["metadata"]["resourceVersion"]


async def _watch_events(
    http: aiohttp.ClientSession, path: str, count: int, start: asyncio.Event, **params: str
) -> list[Obj]:
    events: list[Obj] = []
    async with http.get(path, params={"watch": "1", **params}) as resp:
        assert resp.status == 200
        start.set()
        while len(events) < count:
            line = await asyncio.wait_for(resp.content.readline(), 10)
            events.append(orjson.loads(line))
    return events


async def test_watch_converts_both_ways(http: aiohttp.ClientSession) -> None:
    v1_ready, core_ready = asyncio.Event(), asyncio.Event()
    v1_watch = asyncio.create_task(_watch_events(http, path(EV1), 3, v1_ready))
    core_watch = asyncio.create_task(_watch_events(http, path(CORE), 3, core_ready))
    await v1_ready.wait()
    await core_ready.wait()

    await call(http, "POST", path(EV1), event_v1())
    await call(http, "POST", path(CORE), core_event())
    await call(http, "DELETE", path(EV1, "c"))
    v1_events, core_events = await v1_watch, await core_watch

    assert [(e["type"], e["object"]["metadata"]["name"]) for e in v1_events] == [
        ("ADDED", "e"),
        ("ADDED", "c"),
        ("DELETED", "c"),
    ]
    assert {e["object"]["apiVersion"] for e in v1_events} == {"events.k8s.io/v1"}
    assert [e["object"]["regarding"]["name"] for e in v1_events] == ["web", "node-0", "node-0"]
    assert {e["object"]["apiVersion"] for e in core_events} == {"v1"}
    assert [e["object"]["involvedObject"]["name"] for e in core_events] == [
        "web",
        "node-0",
        "node-0",
    ]


async def test_watch_with_field_selector(http: aiohttp.ClientSession) -> None:
    ready = asyncio.Event()
    watch = asyncio.create_task(
        _watch_events(http, path(EV1), 1, ready, fieldSelector="regarding.name=web")
    )
    await ready.wait()
    await call(http, "POST", path(CORE), core_event())
    await call(http, "POST", path(EV1), event_v1())

    events = await watch

    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "e")]


async def test_series_patch_as_the_broadcaster_sends_it(http: aiohttp.ClientSession) -> None:
    """client-go tools/events: a repeated event is a strategic merge patch of `series`."""
    await call(http, "POST", path(EV1), event_v1())
    patch = {"series": {"count": 2, "lastObservedTime": LATER}}

    code, patched = await call(http, "PATCH", path(EV1, "e"), patch, STRATEGIC)
    _, core = await call(http, "GET", path(CORE, "e"))

    assert code == 200, patched
    assert patched["apiVersion"] == "events.k8s.io/v1"
    assert patched["series"] == {"count": 2, "lastObservedTime": LATER}
    assert patched["note"] == "Successfully assigned default/web to node-0"
    assert core["series"] == {"count": 2, "lastObservedTime": LATER}
    assert core["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]


async def test_update_via_v1(http: aiohttp.ClientSession) -> None:
    _, created = await call(http, "POST", path(EV1), event_v1())
    created["series"] = {"count": 5, "lastObservedTime": LATER}

    code, updated = await call(http, "PUT", path(EV1, "e"), created)

    assert code == 200, updated
    assert updated["series"]["count"] == 5


async def test_missing_event_names_the_group(http: aiohttp.ClientSession) -> None:
    code, body = await call(http, "GET", path(EV1, "nothing"))
    patch_code, patched = await call(http, "PATCH", path(EV1, "nothing"), {}, STRATEGIC)

    assert (code, body["message"]) == (404, 'events.events.k8s.io "nothing" not found')
    assert (patch_code, patched["details"]["group"]) == (404, "events.k8s.io")


@pytest.mark.parametrize(
    ("rt", "selector", "want"),
    [
        pytest.param(EV1, "regarding.name=web", ["e"], id="v1-regarding-name"),
        pytest.param(EV1, "regarding.kind=Node", ["c"], id="v1-regarding-kind"),
        pytest.param(EV1, "regarding.uid=u1,regarding.namespace=default", ["e"], id="v1-uid"),
        pytest.param(EV1, "reportingController=default-scheduler", ["e"], id="v1-reporting"),
        pytest.param(EV1, "source=kubelet", ["c"], id="v1-source"),
        pytest.param(EV1, "source=default-scheduler", ["e"], id="v1-source-from-controller"),
        pytest.param(EV1, "reason=Scheduled,type=Normal", ["e"], id="v1-reason-type"),
        pytest.param(EV1, "metadata.name!=e", ["c"], id="v1-name"),
        pytest.param(CORE, "involvedObject.name=web", ["e"], id="core-involved-name"),
        pytest.param(CORE, "reportingComponent=default-scheduler", ["e"], id="core-reporting"),
        pytest.param(CORE, "source=default-scheduler", ["e"], id="core-source-fallback"),
    ],
)
async def test_field_selectors(
    http: aiohttp.ClientSession, rt: kinds.ResourceType, selector: str, want: list[str]
) -> None:
    await call(http, "POST", path(EV1), event_v1())
    await call(http, "POST", path(CORE), core_event())

    code, body = await call(http, "GET", path(rt), fieldSelector=selector)

    assert code == 200, body
    assert [i["metadata"]["name"] for i in body["items"]] == want


@pytest.mark.parametrize(
    ("rt", "field"),
    [
        pytest.param(EV1, "involvedObject.name", id="v1-core-name"),
        pytest.param(EV1, "reportingComponent", id="v1-core-reporting"),
        pytest.param(EV1, "note", id="v1-note"),
        pytest.param(CORE, "regarding.name", id="core-v1-name"),
    ],
)
async def test_unsupported_field_label(
    http: aiohttp.ClientSession, rt: kinds.ResourceType, field: str
) -> None:
    code, body = await call(http, "GET", path(rt), fieldSelector=f"{field}=x")

    assert (code, body["message"]) == (400, f"field label not supported: {field}")


async def test_discovery_and_openapi(http: aiohttp.ClientSession) -> None:
    _, groups = await call(http, "GET", "/apis")
    _, resources = await call(http, "GET", "/apis/events.k8s.io/v1")
    async with http.get("/openapi/v2", headers={"Accept": "application/json"}) as resp:
        openapi = orjson.loads(await resp.read())
    _, v3 = await call(http, "GET", "/openapi/v3/apis/events.k8s.io/v1")

    group = next(g for g in groups["groups"] if g["name"] == "events.k8s.io")
    assert group["preferredVersion"]["groupVersion"] == "events.k8s.io/v1"
    events = next(r for r in resources["resources"] if r["name"] == "events")
    assert (events["kind"], events["namespaced"], events["shortNames"]) == ("Event", True, ["ev"])
    assert sorted(events["verbs"]) == sorted(kinds.ALL_VERBS)
    definition = openapi["definitions"]["io.k8s.api.events.v1.Event"]
    assert definition["required"] == ["eventTime"]
    assert {"regarding", "note", "series", "deprecatedCount"} <= set(definition["properties"])
    assert "/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}" in openapi["paths"]
    assert "io.k8s.api.events.v1.EventSeries" in v3["components"]["schemas"]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _pb(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _pb_int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


async def test_protobuf_create_as_the_broadcaster_posts_it(http: aiohttp.ClientSession) -> None:
    """client-go's default content type for kube-scheduler and kube-controller-manager."""
    seconds = 1796688000  # 2026-12-08T00:00:00Z
    micro = _pb_int(1, seconds) + _pb_int(2, 123456000)
    regarding = _pb(1, b"Pod") + _pb(2, b"default") + _pb(3, b"web")
    raw = (
        _pb(1, _pb(1, b"pb") + _pb(3, b"default"))
        + _pb(2, micro)
        + _pb(3, _pb_int(1, 2) + _pb(2, micro))
        + _pb(4, b"default-scheduler")
        + _pb(5, b"default-scheduler-node-0")
        + _pb(6, b"Scheduling")
        + _pb(7, b"Scheduled")
        + _pb(8, regarding)
        + _pb(10, b"assigned")
        + _pb(11, b"Normal")
    )
    type_meta = _pb(1, b"events.k8s.io/v1") + _pb(2, b"Event")
    body = b"k8s\x00" + _pb(1, type_meta) + _pb(2, raw)

    async with http.post(
        path(EV1), data=body, headers={"Content-Type": "application/vnd.kubernetes.protobuf"}
    ) as resp:
        code, created = resp.status, orjson.loads(await resp.read())

    assert code == 201, created
    assert created["eventTime"] == "2026-12-08T00:00:00.123456Z"
    assert created["series"] == {"count": 2, "lastObservedTime": "2026-12-08T00:00:00.123456Z"}
    assert created["regarding"] == {"kind": "Pod", "namespace": "default", "name": "web"}
    assert (created["note"], created["reportingController"]) == ("assigned", "default-scheduler")


async def test_duplicate_create_names_the_group(http: aiohttp.ClientSession) -> None:
    await call(http, "POST", path(EV1), event_v1())

    code, body = await call(http, "POST", path(EV1), event_v1())

    assert (code, body["reason"]) == (409, "AlreadyExists")
    assert body["message"] == 'events.events.k8s.io "e" already exists'


async def test_apply_and_put_of_missing_event(http: aiohttp.ClientSession) -> None:
    apply_code, _ = await call(
        http, "PATCH", path(EV1, "e"), event_v1(), "application/apply-patch+yaml", fieldManager="t"
    )
    put_code, put = await call(http, "PUT", path(EV1, "e"), event_v1())

    assert apply_code == 415
    assert (put_code, put["details"]["group"]) == (404, "events.k8s.io")


async def test_delete_and_deletecollection_at_v1(http: aiohttp.ClientSession) -> None:
    await call(http, "POST", path(EV1), event_v1())
    await call(http, "POST", path(EV1), event_v1("other", regarding={"kind": "Node", "name": "n"}))
    await call(http, "POST", path(CORE), core_event())

    code, deleted = await call(http, "DELETE", path(EV1, "e"))
    collection_code, collection = await call(
        http, "DELETE", path(EV1), fieldSelector="regarding.kind=Node"
    )
    _, left = await call(http, "GET", path(CORE))

    assert (code, deleted["kind"], deleted["details"]) == (
        200,
        "Status",
        {"name": "e", "group": "events.k8s.io", "kind": "events", "uid": deleted["details"]["uid"]},
    )
    assert collection_code == 200
    assert (collection["apiVersion"], collection["kind"]) == ("events.k8s.io/v1", "EventList")
    assert sorted(i["regarding"]["name"] for i in collection["items"]) == ["n", "node-0"]
    assert left["items"] == []
