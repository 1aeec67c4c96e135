"""Storage conformance for snapshots: `list_at(revision)` gives the objects as they were at that
revision (undoing later creates, updates and deletes) on every backend, and 410 Expired once the
history back to it is gone."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api.kinds import PODS, RESOURCE_CLAIMS
from draplane.api.meta import Obj
from draplane.apiserver.storageerrors import to_status
from draplane.storage import Storage
from draplane.storage.errors import StorageError
from draplane.testing.builders import make_claim, make_pod

POD = PODS.key
CLAIM = RESOURCE_CLAIMS.key


def _state(objs: list[Obj]) -> list[tuple[str, str, str, dict[str, str]]]:
    return [
        (
            o["metadata"]["namespace"],
            o["metadata"]["name"],
            o["metadata"]["resourceVersion"],
            o["metadata"].get("labels") or {},
        )
        for o in objs
    ]


async def _history(store: Storage) -> dict[int, list[Obj]]:
    """Writes pods across two namespaces (and a claim in between); returns the full pod list
    after each revision."""
    snapshots: dict[int, list[Obj]] = {store.revision: []}

    async def mark() -> None:
        snapshots[store.revision] = (await store.list(POD))[0]

    await store.create(POD, make_pod("b").obj())
    await mark()
    await store.create(POD, make_pod("a", "other").obj())
    await mark()
    await store.create(CLAIM, make_claim("c").obj())
    await mark()
    b = await store.get(POD, "default", "b")
    assert b is not None
    await store.update(POD, {**b, "metadata": {**b["metadata"], "labels": {"v": "2"}}})
    await mark()
    await store.delete(POD, "other", "a")
    await mark()
    await store.create(POD, make_pod("a", "other").label("again", "yes").obj())
    await mark()
    return snapshots


async def test_list_at_every_revision_equals_the_list_then(store: Storage) -> None:
    snapshots = await _history(store)

    for revision, expected in snapshots.items():
        assert _state(await store.list_at(POD, None, revision)) == _state(expected), revision


@pytest.mark.parametrize(
    ("namespace", "revision", "want"),
    [
        pytest.param("default", 3, [("default", "b", 1, {})], id="namespace-before-update"),
        pytest.param("other", 5, [], id="namespace-after-delete"),
        pytest.param("other", 4, [("other", "a", 2, {})], id="namespace-before-delete"),
    ],
)
async def test_list_at_one_namespace(
    store: Storage, namespace: str, revision: int, want: list[Any]
) -> None:
    r0 = store.revision
    await _history(store)

    got = _state(await store.list_at(POD, namespace, r0 + revision))
    assert got == [(ns, name, str(r0 + rev), labels) for ns, name, rev, labels in want]


async def test_list_at_trimmed_revision_is_expired(make_store: Any, backend: str) -> None:
    if backend == "etcd":
        pytest.skip("etcd keeps every revision until compacted (see test_etcd.py)")
    store = make_store(history_size=2)
    await store.start()
    try:
        for name in ("a", "b", "c", "d"):
            await store.create(POD, make_pod(name).obj())
        kept = await store.list_at(POD, None, store.oldest_revision - 1)
        with pytest.raises(StorageError) as err:
            await store.list_at(POD, None, store.oldest_revision - 2)
    finally:
        await store.close()

    assert [o["metadata"]["name"] for o in kept] == ["a", "b"]
    assert (to_status(err.value).code, to_status(err.value).reason) == (410, "Expired")
