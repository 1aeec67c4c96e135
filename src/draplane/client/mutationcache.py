"""client-go's integer-resourceVersion `MutationCache` (with includeAdds) over an informer.

A controller records objects it just wrote; reads return the newer of that copy and the
informer's by integer resourceVersion, so a create is visible before the informer sees it. Entries
are an LRU (`max_entries`) with a TTL and are dropped once the informer is at least as new.
"""

from __future__ import annotations

from collections import OrderedDict

from draplane.api.meta import Obj, key as object_key, resource_version
from draplane.client.lister import Indexers, IndexFunc, Lister
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
        self._lister = lister
        self._indexers = dict(indexers or {})
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        # key -> (object, expiry on the monotonic clock); oldest first.
        self._entries: OrderedDict[str, tuple[Obj, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def mutation(self, obj: Obj) -> None:
        """Remember an object this component just wrote (read-only from now on)."""
        k = object_key(obj)
        self._entries[k] = (obj, self._clock.monotonic() + self._ttl)
        self._entries.move_to_end(k)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    def _cached(self, k: str) -> Obj | None:
        entry = self._entries.get(k)
        if entry is None:
            return None
        obj, expiry = entry
        if self._clock.monotonic() >= expiry:
            del self._entries[k]
            return None
        return obj

    def _newer(self, k: str, informed: Obj) -> Obj:
        cached = self._cached(k)
        if cached is None:
            return informed
        cached_rv, informed_rv = _int_rv(cached), _int_rv(informed)
        if cached_rv is not None and informed_rv is not None and cached_rv > informed_rv:
            return cached
        # The informer caught up (or versions are not comparable): trust it from now on.
        del self._entries[k]
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
        informed = self._lister.by_index(index_name, value)
        seen: set[str] = set()
        result: list[Obj] = []
        for obj in informed:
            k = object_key(obj)
            seen.add(k)
            result.append(self._newer(k, obj))
        func = self._index_func(index_name)
        for k in list(self._entries):
            if k in seen:
                continue
            cached = self._cached(k)
            elsewhere = self._lister.get_by_key(k)
            if elsewhere is not None and cached is not None:
                # Filed under another value by the informer: only a newer copy may count here.
                cached = self._newer(k, elsewhere)
                if cached is elsewhere:
                    continue
            if cached is not None and func is not None and value in func(cached):
                result.append(cached)
        return result

    def _index_func(self, index_name: str) -> IndexFunc | None:
        return self._indexers.get(index_name) or self._lister.indexer(index_name)
