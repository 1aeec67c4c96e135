"""Storage conformance: every backend behaves alike for CRUD, revisions, conflicts and watches.

Revisions are counted from the store's revision when the test starts (`r0`): 0 for a fresh
memory or SQLite store, etcd's current revision for a store on the session's etcd."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from draplane.api import errors
from draplane.api.kinds import NODES, PODS, RESOURCE_CLAIMS
from draplane.api.meta import Obj, deep_copy
from draplane.apiserver.storageerrors import to_status
from draplane.storage import Event, Storage, Watch
from draplane.storage.errors import RevisionConflict, StorageError
from draplane.testing.builders import make_claim, make_node, make_pod

POD = PODS.key
CLAIM = RESOURCE_CLAIMS.key
NODE = NODES.key


def rv(obj: Obj) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def take(watch: Watch, n: int, timeout: float = 5.0) -> list[Event]:
    out: list[Event] = []

    async def collect() -> None:
        async for ev in watch:
            out.append(ev)
            if len(out) == n:
                return

    await asyncio.wait_for(collect(), timeout)
    return out


def summary(events: list[Event]) -> list[tuple[str, str, str, int]]:
    return [(e.type, e.resource, e.object["metadata"]["name"], e.revision) for e in events]


async def test_create_then_get_returns_stored_object_with_revision(store: Storage) -> None:
    pod = make_pod("a").label("app", "x").obj()
    expected = deep_copy(pod)

    r0 = store.revision
    created = await store.create(POD, pod)

    assert rv(created) == r0 + 1 == store.revision
    got = await store.get(POD, "default", "a")
    assert got is not None
    expected["metadata"]["resourceVersion"] = str(r0 + 1)
    assert orjson.dumps(got) == orjson.dumps(expected)


async def test_get_missing_returns_none(store: Storage) -> None:
    assert await store.get(POD, "default", "nope") is None


async def test_create_existing_is_already_exists(store: Storage) -> None:
    r0 = store.revision
    await store.create(POD, make_pod("a").obj())

    with pytest.raises(StorageError) as exc:
        await store.create(POD, make_pod("a").obj())

    assert (to_status(exc.value).code, to_status(exc.value).reason) == (409, "AlreadyExists")
    assert to_status(exc.value).message == 'pods "a" already exists'
    assert store.revision == r0 + 1


async def test_same_name_in_other_namespace_or_resource_is_distinct(store: Storage) -> None:
    r0 = store.revision
    await store.create(POD, make_pod("a", "ns1").obj())
    await store.create(POD, make_pod("a", "ns2").obj())
    await store.create(CLAIM, make_claim("a", "ns1").obj())

    assert store.revision == r0 + 3
    assert (await store.get(CLAIM, "ns1", "a")) is not None


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        pytest.param(None, [("a", "x"), ("a", "y"), ("b", "x"), ("b", "z")], id="all-namespaces"),
        pytest.param("b", [("b", "x"), ("b", "z")], id="one-namespace"),
        pytest.param("empty", [], id="empty-namespace"),
    ],
)
async def test_list_sorted_by_namespace_and_name(
    store: Storage, namespace: str | None, expected: list[tuple[str, str]]
) -> None:
    r0 = store.revision
    for ns, name in [("b", "z"), ("a", "y"), ("b", "x"), ("a", "x")]:
        await store.create(POD, make_pod(name, ns).obj())
    await store.create(CLAIM, make_claim("other", "a").obj())

    items, revision = await store.list(POD, namespace)

    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in items] == expected
    assert revision == r0 + 5


async def test_list_cluster_scoped(store: Storage) -> None:
    r0 = store.revision
    for name in ["n2", "n1"]:
        await store.create(NODE, make_node(name).obj())

    items, revision = await store.list(NODE)

    assert [o["metadata"]["name"] for o in items] == ["n1", "n2"]
    assert revision == r0 + 2


@pytest.mark.parametrize(
    ("expected_rv", "ok"),
    [
        pytest.param(None, True, id="unconditional"),
        pytest.param(1, True, id="matching-rv"),
        pytest.param(0, False, id="stale-rv"),
        pytest.param(7, False, id="future-rv"),
    ],
)
async def test_update(store: Storage, expected_rv: int | None, ok: bool) -> None:
    r0 = store.revision
    expected = None if expected_rv is None else r0 + expected_rv
    await store.create(POD, make_pod("a").obj())
    changed = make_pod("a").label("v", "2").obj()

    if ok:
        updated = await store.update(POD, changed, expected_rv=expected)
        assert rv(updated) == r0 + 2
    else:
        with pytest.raises(StorageError) as exc:
            await store.update(POD, changed, expected_rv=expected)
        assert (to_status(exc.value).code, to_status(exc.value).reason) == (409, "Conflict")

    got = await store.get(POD, "default", "a")
    assert got is not None
    assert ("labels" in got["metadata"]) is ok
    assert rv(got) == r0 + (2 if ok else 1)


@pytest.mark.parametrize(
    "op",
    [
        pytest.param("update", id="update"),
        pytest.param("delete", id="delete"),
    ],
)
async def test_missing_object_is_not_found(store: Storage, op: str) -> None:
    r0 = store.revision
    with pytest.raises(StorageError) as exc:
        if op == "update":
            await store.update(CLAIM, make_claim("c").obj())
        else:
            await store.delete(CLAIM, "default", "c")

    assert (to_status(exc.value).code, to_status(exc.value).reason) == (404, "NotFound")
    assert to_status(exc.value).message == 'resourceclaims.resource.k8s.io "c" not found'
    assert store.revision == r0


@pytest.mark.parametrize(
    ("expected_rv", "ok"),
    [
        pytest.param(None, True, id="unconditional"),
        pytest.param(1, True, id="matching-rv"),
        pytest.param(3, False, id="stale-rv"),
    ],
)
async def test_delete(store: Storage, expected_rv: int | None, ok: bool) -> None:
    r0 = store.revision
    expected = None if expected_rv is None else r0 + expected_rv
    await store.create(POD, make_pod("a").obj())

    if ok:
        last = await store.delete(POD, "default", "a", expected_rv=expected)
        assert rv(last) == r0 + 2 == store.revision
        assert last["metadata"]["name"] == "a"
        assert await store.get(POD, "default", "a") is None
    else:
        with pytest.raises(StorageError) as exc:
            await store.delete(POD, "default", "a", expected_rv=expected)
        assert to_status(exc.value).code == 409
        assert await store.get(POD, "default", "a") is not None


async def test_recreate_after_delete(store: Storage) -> None:
    r0 = store.revision
    await store.create(POD, make_pod("a").obj())
    await store.delete(POD, "default", "a")

    again = await store.create(POD, make_pod("a").obj())

    assert rv(again) == r0 + 3
    assert [o["metadata"]["name"] for o in (await store.list(POD))[0]] == ["a"]


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({"kind": "Pod"}, id="no-metadata"),
        pytest.param({"metadata": {"namespace": "default"}}, id="no-name"),
        pytest.param({"metadata": {"name": 5}}, id="name-not-string"),
        pytest.param({"metadata": {"name": "a", "namespace": ["x"]}}, id="namespace-not-string"),
    ],
)
async def test_unaddressable_object_is_bad_request(store: Storage, obj: dict[str, Any]) -> None:
    r0 = store.revision
    with pytest.raises(errors.StatusError) as exc:
        await store.create(POD, obj)

    assert exc.value.code == 400
    assert store.revision == r0


async def test_revision_monotonic_across_resources(store: Storage) -> None:
    r0 = store.revision
    revisions = [
        rv(await store.create(POD, make_pod("a").obj())),
        rv(await store.create(CLAIM, make_claim("c").obj())),
        rv(await store.create(NODE, make_node("n").obj())),
        rv(await store.update(POD, make_pod("a").label("x", "y").obj())),
        rv(await store.delete(CLAIM, "default", "c")),
    ]

    assert revisions == [r0 + n for n in [1, 2, 3, 4, 5]]
    assert store.revision == r0 + 5


async def _write_sequence(store: Storage) -> None:
    await store.create(POD, make_pod("a").obj())
    await store.create(CLAIM, make_claim("c").obj())
    await store.update(POD, make_pod("a").label("x", "y").obj())
    await store.delete(POD, "default", "a")


async def test_watch_from_revision_replays_then_streams_live(store: Storage) -> None:
    r0 = store.revision
    await _write_sequence(store)
    watch = store.watch(r0 + 2)

    await store.create(NODE, make_node("n").obj())
    events = await take(watch, 3)
    await watch.close()

    assert summary(events) == [
        ("MODIFIED", POD, "a", r0 + 3),
        ("DELETED", POD, "a", r0 + 4),
        ("ADDED", NODE, "n", r0 + 5),
    ]
    assert rv(events[1].object) == r0 + 4
    assert events[1].prev is not None and rv(events[1].prev) == r0 + 3
    assert events[0].prev is not None and "labels" not in events[0].prev["metadata"]


async def test_watch_from_zero_sees_everything(store: Storage) -> None:
    r0 = store.revision
    watch = store.watch(r0)
    await _write_sequence(store)

    events = await take(watch, 4)
    await watch.close()

    assert [e.revision for e in events] == [r0 + n for n in [1, 2, 3, 4]]
    assert events[0].prev is None


async def test_watch_from_current_revision_only_sees_new_events(store: Storage) -> None:
    r0 = store.revision
    await _write_sequence(store)
    watch = store.watch(store.revision)

    await store.create(POD, make_pod("b").obj())
    events = await take(watch, 1)
    await watch.close()

    assert summary(events) == [("ADDED", POD, "b", r0 + 5)]


async def test_watch_concurrent_writes_arrive_in_order_without_duplicates(store: Storage) -> None:
    r0 = store.revision
    await store.create(POD, make_pod("seed").obj())
    watch = store.watch(r0 + 1)

    await asyncio.gather(*(store.create(POD, make_pod(f"p{i}").obj()) for i in range(40)))
    events = await take(watch, 40)
    await watch.close()

    assert [e.revision for e in events] == list(range(r0 + 2, r0 + 42))


async def test_too_old_revision_is_expired_after_trimming(make_store: Any, backend: str) -> None:
    if backend == "etcd":
        pytest.skip("etcd keeps every revision until compacted (see test_etcd.py)")
    store: Storage = make_store(history_size=3)
    await store.start()
    try:
        for i in range(6):
            await store.create(POD, make_pod(f"p{i}").obj())

        assert store.oldest_revision == 4
        with pytest.raises(StorageError) as exc:
            store.watch(2)
        assert (to_status(exc.value).code, to_status(exc.value).reason) == (410, "Expired")
        assert to_status(exc.value).message == "too old resource version: 2 (3)"

        watch = store.watch(3)
        events = await take(watch, 3)
        await watch.close()
        assert [e.revision for e in events] == [4, 5, 6]
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("pads", "oldest"),
    [
        pytest.param([1000] * 6, 1, id="within-bound-all-kept"),
        pytest.param([1000] * 4 + [6500, 1000], 4, id="large-event-pushes-out-older"),
        pytest.param([1000] * 5 + [20_000], 6, id="newest-kept-however-large"),
    ],
)
async def test_history_is_bounded_in_bytes(
    make_store: Any, backend: str, pads: list[int], oldest: int
) -> None:
    """Each pod of pad 1000 counts about 1.35 kB (JSON plus the per-event overhead)."""
    if backend == "etcd":
        pytest.skip("etcd keeps every revision until compacted (see test_etcd.py)")
    store: Storage = make_store(history_bytes=10_000)
    await store.start()
    try:
        for i, pad in enumerate(pads):
            await store.create(POD, make_pod(f"p{i}").annotation("pad", "x" * pad).obj())
        kept = (store.oldest_revision, store.revision)
        watch = store.watch(oldest - 1)
        replayed = [e.revision for e in await take(watch, len(pads) - oldest + 1)]
        await watch.close()
        with pytest.raises(StorageError) as exc:
            store.watch(oldest - 2)
    finally:
        await store.close()

    assert kept == (oldest, len(pads))
    assert replayed == list(range(oldest, len(pads) + 1))
    assert to_status(exc.value).code == 410


async def test_concurrent_cas_updates_exactly_one_wins(store: Storage) -> None:
    r0 = store.revision
    await store.create(CLAIM, make_claim("c").obj())

    results = await asyncio.gather(
        *(
            store.update(CLAIM, make_claim("c").label("writer", str(i)).obj(), expected_rv=r0 + 1)
            for i in range(10)
        ),
        return_exceptions=True,
    )

    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, RevisionConflict)]
    assert (len(winners), len(losers)) == (1, 9)
    got = await store.get(CLAIM, "default", "c")
    assert got == winners[0]
    assert store.revision == r0 + 2


async def test_concurrent_creates_of_same_name_exactly_one_wins(store: Storage) -> None:
    r0 = store.revision
    results = await asyncio.gather(
        *(store.create(POD, make_pod("a").label("i", str(i)).obj()) for i in range(5)),
        return_exceptions=True,
    )

    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert store.revision == r0 + 1


async def test_close_ends_watches(make_store: Any) -> None:
    store: Storage = make_store()
    await store.start()
    r0 = store.revision
    watch = store.watch(r0)
    received: list[Event] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for ev in watch:
            received.append(ev)
            first.set()

    task = asyncio.create_task(consume())
    await store.create(POD, make_pod("a").obj())
    await asyncio.wait_for(first.wait(), 5)
    await store.close()

    await asyncio.wait_for(task, 5)
    assert [e.revision for e in received] == [r0 + 1]


async def test_watch_close_ends_iteration(store: Storage) -> None:
    watch = store.watch(store.revision)
    await watch.close()
    await store.create(POD, make_pod("a").obj())

    assert [ev async for ev in watch] == []


async def test_watch_from_future_revision_skips_until_then(store: Storage) -> None:
    r0 = store.revision
    await store.create(POD, make_pod("a").obj())
    watch = store.watch(r0 + 2)

    await store.create(POD, make_pod("b").obj())
    await store.create(POD, make_pod("c").obj())
    events = await take(watch, 1)
    await watch.close()

    assert summary(events) == [("ADDED", POD, "c", r0 + 3)]


async def test_concurrent_writes_to_one_key_apply_in_order(store: Storage) -> None:
    r0 = store.revision
    results = await asyncio.gather(
        store.create(POD, make_pod("a").obj()),
        store.update(POD, make_pod("a").label("x", "1").obj(), expected_rv=r0 + 1),
        store.delete(POD, "default", "a", expected_rv=r0 + 2),
        store.create(POD, make_pod("a").label("x", "2").obj()),
    )

    assert [rv(r) for r in results] == [r0 + n for n in [1, 2, 3, 4]]
    got = await store.get(POD, "default", "a")
    assert got is not None
    assert (rv(got), got["metadata"]["labels"]) == (r0 + 4, {"x": "2"})
