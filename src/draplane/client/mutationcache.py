"""client-go's integer-resourceVersion `MutationCache` (with includeAdds) over an informer.

A controller records objects it just wrote; reads return the newer of that copy and the
informer's by integer resourceVersion, so a create is visible before the informer sees it. Entries
are an LRU (`max_entries`) with a TTL, indexed like the informer, dropped once the informer is at
least as new, and forgotten on request when the object is deleted.
"""

from __future__ import annotations

from collections import OrderedDict

from draplane.api.meta import Obj, key as object_key, resource_version, uid as object_uid
from draplane.client.lister import IndexedStore, Indexers, Lister
from draplane.clock import REAL_CLOCK, Clock


def _int_rv(obj: Obj) -> int | None:
    try:
        return int(resource_version(obj))
    except ValueError:
        return None


class MutationCache:
    def __init__(
        self,
        lister: Lister,
        *,
        indexers: Indexers | None = None,
        ttl: float = 3600,
        max_entries: int = 100,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        """`indexers` add to (or override) the informer's index functions for cached objects."""
        self._lister = lister
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        # The cached objects, indexed as the informer indexes its own; `by_index` reads a bucket
        # instead of scanning every entry.
        self._store = IndexedStore(indexers)
        # key -> expiry on the monotonic clock; oldest first (the LRU order).
        self._expiry: OrderedDict[str, float] = OrderedDict()
        # UIDs of deleted objects: a write that returns after its object's delete event was
        # seen must not bring the object back.
        self._forgotten: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._expiry)

    def mutation(self, obj: Obj) -> None:
        """Remember an object this component just wrote (read-only from now on)."""
        if object_uid(obj) in self._forgotten:
            return
        k = object_key(obj)
        self._store.put(k, obj)
        self._expiry[k] = self._clock.monotonic() + self._ttl
        self._expiry.move_to_end(k)
        while len(self._expiry) > self._max_entries:
            oldest, _ = self._expiry.popitem(last=False)
            self._store.remove(oldest)

    def forget(self, obj: Obj) -> None:
        """The object was deleted: drop its cached copy and ignore later writes of it."""
        uid = object_uid(obj)
        k = object_key(obj)
        cached = self._store.items.get(k)
        if cached is not None and (not uid or object_uid(cached) == uid):
            self._drop(k)
        if uid:
            self._forgotten[uid] = None
            while len(self._forgotten) > self._max_entries:
                self._forgotten.popitem(last=False)

    def _drop(self, k: str) -> None:
        self._store.remove(k)
        self._expiry.pop(k, None)

    def _cached(self, k: str) -> Obj | None:
        expiry = self._expiry.get(k)
        if expiry is None:
            return None
        if self._clock.monotonic() >= expiry:
            self._drop(k)
            return None
        return self._store.items[k]

    def _newer(self, k: str, informed: Obj) -> Obj:
        cached = self._cached(k)
        if cached is None:
            return informed
        cached_rv, informed_rv = _int_rv(cached), _int_rv(informed)
        if cached_rv is not None and informed_rv is not None and cached_rv > informed_rv:
            return cached
        # The informer caught up (or versions are not comparable): trust it from now on.
        self._drop(k)
        return informed

    def get(self, name: str, namespace: str = "") -> Obj | None:
        k = f"{namespace}/{name}" if namespace else name
        informed = self._lister.get_by_key(k)
        if informed is None:
            return self._cached(k)
        return self._newer(k, informed)

    def by_index(self, index_name: str, value: str) -> list[Obj]:
        """Informer objects in the index (each replaced by a newer cached copy), then cached
        objects the informer does not have yet that index to `value`."""
        self._ensure_index(index_name)
        seen: set[str] = set()
        result: list[Obj] = []
        for obj in self._lister.by_index(index_name, value):
            k = object_key(obj)
            seen.add(k)
            result.append(self._newer(k, obj))
        for k in self._store.keys_by_index(index_name, value):
            if k in seen:
                continue
            elsewhere = self._lister.get_by_key(k)
            # Filed elsewhere by the informer: only a newer cached copy counts here.
            cached = self._cached(k) if elsewhere is None else self._newer(k, elsewhere)
            if cached is not None and cached is not elsewhere:
                result.append(cached)
        return result

    def _ensure_index(self, index_name: str) -> None:
        """Index the cache with the informer's function, the first time the index is asked."""
        if self._store.indexer(index_name) is not None:
            return
        func = self._lister.indexer(index_name)
        if func is None:
            raise KeyError(f"index {index_name!r} does not exist")
        self._store.add_indexers({index_name: func})
