"""MutationCache: newer-by-resourceVersion reads, includeAdds index lookups, LRU and TTL."""

from __future__ import annotations

import pytest

from draplane.api.meta import Obj, controller_ref, key
from draplane.client.lister import IndexedStore, Lister
from draplane.client.mutationcache import MutationCache
from draplane.testing.builders import make_claim
from draplane.testing.clock import FakeClock


def by_owner(obj: Obj) -> list[str]:
    ref = controller_ref(obj)
    return [ref["uid"]] if ref else []


def claim(name: str, rv: str, owner: str = "pod-uid") -> Obj:
    obj = make_claim(name).resource_version(rv).obj()
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner, "controller": True}
    ]
    return obj


def setup(*informed: Obj, **kwargs: object) -> tuple[IndexedStore, MutationCache]:
    store = IndexedStore({"owner": by_owner})
    for obj in informed:
        store.put(key(obj), obj)
    return store, MutationCache(Lister(store), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("informed_rv", "cached_rv", "want_rv", "cache_left"),
    [
        pytest.param(None, "5", "5", 1, id="only-cached"),
        pytest.param("4", "5", "5", 1, id="cached-newer"),
        pytest.param("5", "5", "5", 0, id="equal-informer-wins"),
        pytest.param("6", "5", "6", 0, id="informer-newer"),
        pytest.param("6", "garbage", "6", 0, id="unparsable-informer-wins"),
    ],
)
def test_get_returns_newer_copy(
    informed_rv: str | None, cached_rv: str, want_rv: str, cache_left: int
) -> None:
    informed = [claim("c", informed_rv)] if informed_rv else []
    _, cache = setup(*informed)
    cache.mutation(claim("c", cached_rv))
    got = cache.get("c", "default")
    assert got is not None
    assert got["metadata"]["resourceVersion"] == want_rv
    assert len(cache) == cache_left


def test_get_unknown_returns_none() -> None:
    _, cache = setup()
    assert cache.get("nope", "default") is None


def test_by_index_includes_cached_adds_not_yet_informed() -> None:
    _, cache = setup(claim("a", "1"), claim("other", "2", owner="x"))
    cache.mutation(claim("b", "3"))
    cache.mutation(claim("c", "4", owner="x"))
    names = [o["metadata"]["name"] for o in cache.by_index("owner", "pod-uid")]
    assert names == ["a", "b"]


def test_by_index_prefers_newer_cached_copy_and_drops_stale_one() -> None:
    store, cache = setup(claim("a", "5"))
    cache.mutation(claim("a", "6"))
    assert [o["metadata"]["resourceVersion"] for o in cache.by_index("owner", "pod-uid")] == ["6"]
    store.put("default/a", claim("a", "7"))
    assert [o["metadata"]["resourceVersion"] for o in cache.by_index("owner", "pod-uid")] == ["7"]
    assert len(cache) == 0


def test_by_index_moved_object_is_not_reported_under_old_value() -> None:
    _, cache = setup(claim("a", "9", owner="new"))
    cache.mutation(claim("a", "8", owner="pod-uid"))
    assert cache.by_index("owner", "pod-uid") == []


def test_entries_expire_after_ttl() -> None:
    clock = FakeClock()
    _, cache = setup(ttl=60, clock=clock)
    cache.mutation(claim("a", "1"))
    clock.step(59)
    assert cache.get("a", "default") is not None
    clock.step(1)
    assert cache.get("a", "default") is None
    assert cache.by_index("owner", "pod-uid") == []


def test_lru_evicts_oldest_beyond_max_entries() -> None:
    _, cache = setup(max_entries=2)
    for name in ("a", "b", "c"):
        cache.mutation(claim(name, "1"))
    assert cache.get("a", "default") is None
    assert [o["metadata"]["name"] for o in cache.by_index("owner", "pod-uid")] == ["b", "c"]


def test_explicit_indexers_override_the_informers() -> None:
    store = IndexedStore()
    cache = MutationCache(Lister(store), indexers={"namespace": lambda o: ["everywhere"]})
    cache.mutation(claim("a", "1"))
    assert [o["metadata"]["name"] for o in cache.by_index("namespace", "everywhere")] == ["a"]


def test_by_index_reads_an_index_not_every_entry() -> None:
    """Under load the cache holds thousands of claims; a lookup must not re-index them all."""
    calls: list[str] = []

    def counting(obj: Obj) -> list[str]:
        calls.append(obj["metadata"]["name"])
        return by_owner(obj)

    store = IndexedStore({"owner": by_owner})
    cache = MutationCache(Lister(store), indexers={"owner": counting}, max_entries=1000)
    for i in range(500):
        cache.mutation(claim(f"c{i}", "1", owner=f"pod-{i}"))
    assert len(calls) == 500
    for i in range(500):
        assert [o["metadata"]["name"] for o in cache.by_index("owner", f"pod-{i}")] == [f"c{i}"]
    assert len(calls) == 500


def test_informer_index_function_is_used_for_cached_objects() -> None:
    _, cache = setup()
    cache.mutation(claim("a", "1", owner="x"))
    assert [o["metadata"]["name"] for o in cache.by_index("owner", "x")] == ["a"]
    cache.mutation(claim("b", "2", owner="x"))
    assert [o["metadata"]["name"] for o in cache.by_index("owner", "x")] == ["a", "b"]


def test_unknown_index_is_an_error() -> None:
    _, cache = setup()
    with pytest.raises(KeyError):
        cache.by_index("nope", "x")


def with_uid(obj: Obj, uid: str) -> Obj:
    obj["metadata"]["uid"] = uid
    return obj


@pytest.mark.parametrize(
    ("cached_uid", "forgotten_uid", "left"),
    [
        pytest.param("u1", "u1", [], id="deleted-object-is-forgotten"),
        pytest.param("u2", "u1", ["a"], id="recreated-object-with-same-name-stays"),
        pytest.param("u1", "", [], id="tombstone-without-uid-drops-the-key"),
    ],
)
def test_forget(cached_uid: str, forgotten_uid: str, left: list[str]) -> None:
    _, cache = setup()
    cache.mutation(with_uid(claim("a", "3"), cached_uid))
    cache.forget(with_uid(claim("a", "3"), forgotten_uid))
    assert [o["metadata"]["name"] for o in cache.by_index("owner", "pod-uid")] == left
    assert (cache.get("a", "default") is not None) is bool(left)
    assert len(cache) == len(left)


def test_write_returning_after_the_delete_does_not_resurrect_the_object() -> None:
    _, cache = setup()
    cache.forget(with_uid(claim("a", "3"), "u1"))
    cache.mutation(with_uid(claim("a", "2"), "u1"))
    assert cache.get("a", "default") is None
    cache.mutation(with_uid(claim("a", "4"), "u2"))
    got = cache.get("a", "default")
    assert got is not None
    assert got["metadata"]["uid"] == "u2"
