"""Informer behaviour against a scripted fake `Client` (the seam: list, watch, 410 re-list, retry
after connection errors, indexes, handlers, factory), then against the real in-process API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from draplane.api.errors import StatusError
from draplane.api.handler import WatchEvent
from draplane.api.kinds import PODS, RESOURCE_CLAIMS, ResourceType
from draplane.api.meta import Obj
from draplane.client.informer import DeletedFinalStateUnknown, Informer, InformerFactory
from draplane.client.mutationcache import MutationCache
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster


def with_rv(obj: Obj, rv: int) -> Obj:
    obj["metadata"]["resourceVersion"] = str(rv)
    return obj


class ScriptedStream:
    def __init__(self) -> None:
        self.events: asyncio.Queue[WatchEvent | None] = asyncio.Queue()
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[WatchEvent]:
        while True:
            event = await self.events.get()
            if event is None:
                return
            yield event

    async def close(self) -> None:
        self.closed = True


class ScriptedClient:
    """Serves `items` to list; each watch hands out a new ScriptedStream the test drives."""

    user = "test"

    def __init__(self, items: list[Obj], rv: int) -> None:
        self.items = items
        self.rv = rv
        self.list_calls = 0
        self.watch_rvs: list[str] = []
        self.streams: list[ScriptedStream] = []
        self.fail_next: list[Exception] = []
        self.new_stream = asyncio.Event()

    async def list(self, rt: ResourceType, namespace: str = "", **_: Any) -> Obj:
        self.list_calls += 1
        if self.fail_next:
            raise self.fail_next.pop(0)
        return {"items": list(self.items), "metadata": {"resourceVersion": str(self.rv)}}

    async def watch(self, rt: ResourceType, namespace: str = "", **kw: Any) -> ScriptedStream:
        self.watch_rvs.append(kw["resource_version"])
        assert kw["allow_bookmarks"] is True
        stream = ScriptedStream()
        self.streams.append(stream)
        self.new_stream.set()
        return stream

    async def stream(self, index: int) -> ScriptedStream:
        """The index-th watch stream, once the informer has opened it."""
        while len(self.streams) <= index:
            self.new_stream.clear()
            await asyncio.wait_for(self.new_stream.wait(), 1)
        return self.streams[index]


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def on_add(self, obj: Obj) -> None:
        self.calls.append(("add", obj["metadata"]["name"]))

    def on_update(self, old: Obj, new: Obj) -> None:
        self.calls.append(
            (
                "update",
                new["metadata"]["name"],
                old["metadata"]["resourceVersion"],
                new["metadata"]["resourceVersion"],
            )
        )

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.calls.append(("tombstone", obj.key))
        else:
            self.calls.append(("delete", obj["metadata"]["name"]))


async def running(informer: Informer, body: Callable[[], Awaitable[None]]) -> None:
    task = asyncio.create_task(informer.run())
    try:
        await body()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def pod(name: str, rv: int, **labels: str) -> Obj:
    builder = make_pod(name)
    for k, v in labels.items():
        builder.label(k, v)
    return with_rv(builder.obj(), rv)


async def test_list_then_watch_delivers_adds_updates_deletes() -> None:
    client = ScriptedClient([pod("a", 5)], rv=10)
    informer = Informer(client, PODS)
    rec = Recorder()
    informer.add_handler(on_add=rec.on_add, on_update=rec.on_update, on_delete=rec.on_delete)

    async def body() -> None:
        await asyncio.wait_for(informer.wait_synced(), 1)
        stream = await client.stream(0)
        assert client.watch_rvs == ["10"]
        await stream.events.put(WatchEvent("ADDED", pod("b", 11)))
        await stream.events.put(WatchEvent("MODIFIED", pod("a", 12)))
        await stream.events.put(WatchEvent("MODIFIED", pod("a", 12)))
        await stream.events.put(WatchEvent("DELETED", pod("b", 13)))
        await wait_for(lambda: len(rec.calls) == 5)

    await running(informer, body)
    assert rec.calls == [
        ("add", "a"),
        ("add", "b"),
        ("update", "a", "5", "12"),
        ("update", "a", "12", "12"),
        ("delete", "b"),
    ]
    assert [o["metadata"]["name"] for o in informer.lister.list()] == ["a"]
    assert informer.last_sync_resource_version == "13"


async def test_store_is_updated_before_handlers_run() -> None:
    client = ScriptedClient([], rv=1)
    informer = Informer(client, PODS)
    seen: list[Obj | None] = []
    informer.add_handler(on_add=lambda obj: seen.append(informer.lister.get("a", "default")))

    async def body() -> None:
        stream = await client.stream(0)
        await stream.events.put(WatchEvent("ADDED", pod("a", 2)))
        await wait_for(lambda: bool(seen))

    await running(informer, body)
    assert seen[0] is not None
    assert seen[0]["metadata"]["resourceVersion"] == "2"


async def test_error_410_relists_and_delivers_differences_with_tombstones() -> None:
    client = ScriptedClient([pod("keep", 1), pod("change", 2), pod("gone", 3)], rv=3)
    informer = Informer(client, PODS)
    rec = Recorder()
    informer.add_handler(on_add=rec.on_add, on_update=rec.on_update, on_delete=rec.on_delete)

    async def body() -> None:
        stream = await client.stream(0)
        rec.calls.clear()
        client.items = [pod("keep", 1), pod("change", 7), pod("new", 8)]
        client.rv = 9
        gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
        await stream.events.put(WatchEvent("ERROR", gone))
        await client.stream(1)

    await running(informer, body)
    assert rec.calls == [
        ("update", "change", "2", "7"),
        ("add", "new"),
        ("tombstone", "default/gone"),
    ]
    assert client.list_calls == 2
    assert client.watch_rvs == ["3", "9"]
    assert client.streams[0].closed
    assert sorted(informer.lister.keys()) == ["default/change", "default/keep", "default/new"]


async def test_bookmark_moves_watch_revision_and_stream_end_rewatches() -> None:
    client = ScriptedClient([], rv=4)
    informer = Informer(client, PODS)

    async def body() -> None:
        stream = await client.stream(0)
        await stream.events.put(WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "40"}}))
        await stream.events.put(None)
        await client.stream(1)

    await running(informer, body)
    assert client.watch_rvs == ["4", "40"]
    assert client.list_calls == 1


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(ConnectionError("refused"), id="connection-error"),
        pytest.param(StatusError(503, "ServiceUnavailable", "down"), id="status-error"),
    ],
)
async def test_list_failure_retries_after_backoff(failure: Exception) -> None:
    clock = FakeClock()
    client = ScriptedClient([pod("a", 1)], rv=1)
    client.fail_next = [failure, failure]
    informer = Informer(client, PODS, clock=clock)

    async def body() -> None:
        await wait_for(lambda: clock.sleepers == 1)
        assert not informer.has_synced()
        clock.step(0.8)
        await wait_for(lambda: client.list_calls == 2 and clock.sleepers == 1)
        clock.step(1.5)
        assert not informer.has_synced()
        clock.step(0.1)
        await asyncio.wait_for(informer.wait_synced(), 1)

    await running(informer, body)
    assert client.list_calls == 3
    assert informer.lister.get("a", "default") is not None


async def test_watch_error_event_other_than_410_retries_with_relist() -> None:
    clock = FakeClock()
    client = ScriptedClient([pod("a", 1)], rv=1)
    informer = Informer(client, PODS, clock=clock)

    async def body() -> None:
        stream = await client.stream(0)
        err = {"kind": "Status", "code": 500, "reason": "InternalError", "message": "boom"}
        await stream.events.put(WatchEvent("ERROR", err))
        await wait_for(lambda: clock.sleepers == 1)
        clock.step(0.8)
        await client.stream(1)

    await running(informer, body)
    assert client.list_calls == 2


async def test_indexes_follow_updates_and_deletes() -> None:
    def by_app(obj: Obj) -> list[str]:
        app = obj["metadata"].get("labels", {}).get("app")
        return [app] if app else []

    client = ScriptedClient([pod("a", 1, app="x"), pod("b", 2, app="x")], rv=2)
    informer = Informer(client, PODS, indexers={"app": by_app})

    async def body() -> None:
        stream = await client.stream(0)
        assert [o["metadata"]["name"] for o in informer.lister.by_index("app", "x")] == ["a", "b"]
        await stream.events.put(WatchEvent("MODIFIED", pod("a", 3, app="y")))
        await stream.events.put(WatchEvent("DELETED", pod("b", 4, app="x")))
        await wait_for(lambda: informer.last_sync_resource_version == "4")

    await running(informer, body)
    assert informer.lister.by_index("app", "x") == []
    assert [o["metadata"]["name"] for o in informer.lister.by_index("app", "y")] == ["a"]
    assert [o["metadata"]["name"] for o in informer.lister.by_index("namespace", "default")] == [
        "a"
    ]


@pytest.mark.parametrize(
    ("namespace", "selector", "want"),
    [
        pytest.param(None, "", ["a", "b", "c"], id="all"),
        pytest.param("other", "", ["c"], id="namespace"),
        pytest.param(None, "app=x", ["a", "c"], id="equality"),
        pytest.param(None, "app!=x", ["b"], id="inequality"),
        pytest.param(None, "app in (y, z)", ["b"], id="set-in"),
        pytest.param(None, "app notin (y)", ["a", "c"], id="set-notin"),
        pytest.param(None, "tier", ["a"], id="exists"),
        pytest.param(None, "!tier", ["b", "c"], id="not-exists"),
        pytest.param("default", "app=x,tier=web", ["a"], id="namespace-and-labels"),
    ],
)
async def test_lister_list_filters(namespace: str | None, selector: str, want: list[str]) -> None:
    items = [
        with_rv(make_pod("a").label("app", "x").label("tier", "web").obj(), 1),
        with_rv(make_pod("b").label("app", "y").obj(), 2),
        with_rv(make_pod("c", "other").label("app", "x").obj(), 3),
    ]
    client = ScriptedClient(items, rv=3)
    informer = Informer(client, PODS)

    async def body() -> None:
        await asyncio.wait_for(informer.wait_synced(), 1)

    await running(informer, body)
    got = informer.lister.list(namespace, label_selector=selector)
    assert sorted(o["metadata"]["name"] for o in got) == want


def test_lister_rejects_bad_selector_with_status_error() -> None:
    informer = Informer(ScriptedClient([], rv=1), PODS)
    with pytest.raises(StatusError) as err:
        informer.lister.list(label_selector="app in x")
    assert err.value.code == 400


async def test_handler_added_after_sync_gets_current_contents() -> None:
    client = ScriptedClient([pod("a", 1), pod("b", 2)], rv=2)
    informer = Informer(client, PODS)
    rec = Recorder()

    async def body() -> None:
        await asyncio.wait_for(informer.wait_synced(), 1)
        informer.add_handler(on_add=rec.on_add)

    await running(informer, body)
    assert sorted(rec.calls) == [("add", "a"), ("add", "b")]


async def test_failing_handler_does_not_stop_others() -> None:
    client = ScriptedClient([pod("a", 1)], rv=1)
    informer = Informer(client, PODS)
    rec = Recorder()

    def broken(obj: Obj) -> None:
        raise ValueError("bug")

    informer.add_handler(on_add=broken)
    informer.add_handler(on_add=rec.on_add)

    async def body() -> None:
        await asyncio.wait_for(informer.wait_synced(), 1)

    await running(informer, body)
    assert rec.calls == [("add", "a")]


async def test_factory_shares_informers_and_syncs_all() -> None:
    client = ScriptedClient([with_rv(make_claim("c").obj(), 1)], rv=1)
    factory = InformerFactory(client)
    pods = factory.informer(PODS)
    assert factory.informer(PODS) is pods
    claims = factory.informer(RESOURCE_CLAIMS, indexers={"name": lambda o: [o["metadata"]["name"]]})
    await factory.start()
    await asyncio.wait_for(factory.wait_synced(), 1)
    assert factory.has_synced()
    await factory.stop()
    assert [o["metadata"]["name"] for o in claims.lister.by_index("name", "c")] == ["c"]


# Against the real in-process API (registry + memory storage).


async def test_cluster_informer_sees_adds_updates_deletes(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(PODS, make_pod("before").obj(), "default")
    informer = Informer(client, PODS)
    rec = Recorder()
    informer.add_handler(on_add=rec.on_add, on_update=rec.on_update, on_delete=rec.on_delete)

    async def body() -> None:
        await asyncio.wait_for(informer.wait_synced(), 2)
        created = await client.create(PODS, make_pod("after").obj(), "default")
        patched = await client.patch(
            PODS, "after", {"metadata": {"labels": {"app": "x"}}}, "default"
        )
        await client.delete(PODS, "before", "default", grace_period_seconds=0)
        await wait_for(lambda: ("delete", "before") in rec.calls)
        assert rec.calls == [
            ("add", "before"),
            ("add", "after"),
            (
                "update",
                "after",
                created["metadata"]["resourceVersion"],
                patched["metadata"]["resourceVersion"],
            ),
            ("delete", "before"),
        ]

    await running(informer, body)
    assert informer.lister.get("before", "default") is None
    after = informer.lister.get("after", "default")
    assert after is not None
    assert after["metadata"]["labels"] == {"app": "x"}
    assert [o["metadata"]["name"] for o in informer.lister.list("default", "app=x")] == ["after"]


async def test_cluster_factory_indexes_and_mutation_cache(cluster: Cluster) -> None:
    client = cluster.client()

    def by_owner(obj: Obj) -> list[str]:
        return [r["uid"] for r in obj["metadata"].get("ownerReferences") or []]

    pod = await client.create(PODS, make_pod("web").obj(), "default")
    factory = InformerFactory(client)
    claims = factory.informer(RESOURCE_CLAIMS, indexers={"owner": by_owner})
    await factory.start()
    await asyncio.wait_for(factory.wait_synced(), 2)
    cache = MutationCache(claims.lister)
    claim = make_claim("web-gpu").obj()
    claim["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "web",
            "uid": pod["metadata"]["uid"],
            "controller": True,
        }
    ]
    created = await client.create(RESOURCE_CLAIMS, claim, "default")
    cache.mutation(created)
    # Visible through the mutation cache before (or whether or not) the informer saw it.
    assert [o["metadata"]["name"] for o in cache.by_index("owner", pod["metadata"]["uid"])] == [
        "web-gpu"
    ]
    await wait_for(lambda: claims.lister.get("web-gpu", "default") is not None)
    await factory.stop()
    assert [o["metadata"]["name"] for o in cache.by_index("owner", pod["metadata"]["uid"])] == [
        "web-gpu"
    ]
    assert len(cache) == 0
