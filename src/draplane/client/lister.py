"""The informer's indexed store and the read-only `Lister` view over it.

Objects are stored exactly as the watch delivered them (no copies): they are read-only for every
reader. Keys are `namespace/name` (or `name`); index buckets keep insertion order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from draplane.api.meta import Obj, labels, namespace as object_namespace
from draplane.api.selectors import LabelSelector

IndexFunc = Callable[[Obj], list[str]]
Indexers = dict[str, IndexFunc]

NAMESPACE_INDEX = "namespace"


def namespace_index(obj: Obj) -> list[str]:
    """client-go's MetaNamespaceIndexFunc."""
    return [object_namespace(obj)]


class IndexedStore:
    """Objects by key plus one inverted index per indexer; mutated only by the informer."""

    def __init__(self, indexers: Indexers | None = None) -> None:
        self.items: dict[str, Obj] = {}
        self._indexers: Indexers = {NAMESPACE_INDEX: namespace_index}
        # index name -> index value -> keys (a dict used as an ordered set)
        self._indices: dict[str, dict[str, dict[str, None]]] = {NAMESPACE_INDEX: {}}
        # index name -> key -> the values the object was filed under
        self._values: dict[str, dict[str, list[str]]] = {NAMESPACE_INDEX: {}}
        if indexers:
            self.add_indexers(indexers)

    def add_indexers(self, indexers: Indexers) -> None:
        for index_name, func in indexers.items():
            existing = self._indexers.get(index_name)
            if existing is func:
                continue
            if existing is not None and index_name != NAMESPACE_INDEX:
                raise ValueError(f"indexer {index_name!r} already exists")
            self._indexers[index_name] = func
            self._indices[index_name] = {}
            self._values[index_name] = {}
            for k, obj in self.items.items():
                self._file(index_name, k, func(obj))

    def _file(self, index_name: str, k: str, values: list[str]) -> None:
        self._values[index_name][k] = values
        index = self._indices[index_name]
        for value in values:
            bucket = index.get(value)
            if bucket is None:
                index[value] = {k: None}
            else:
                bucket[k] = None

    def _unfile(self, index_name: str, k: str, values: Iterable[str]) -> None:
        index = self._indices[index_name]
        for value in values:
            bucket = index.get(value)
            if bucket is not None:
                bucket.pop(k, None)
                if not bucket:
                    del index[value]

    def put(self, k: str, obj: Obj) -> Obj | None:
        """Store obj under k; returns the object it replaced."""
        old = self.items.get(k)
        self.items[k] = obj
        for index_name, func in self._indexers.items():
            new_values = func(obj)
            old_values = self._values[index_name].get(k)
            if old_values == new_values:
                continue
            if old_values:
                self._unfile(index_name, k, old_values)
            self._file(index_name, k, new_values)
        return old

    def remove(self, k: str) -> Obj | None:
        old = self.items.pop(k, None)
        if old is None:
            return None
        for index_name, values in self._values.items():
            old_values = values.pop(k, None)
            if old_values:
                self._unfile(index_name, k, old_values)
        return old

    def by_index(self, index_name: str, value: str) -> list[Obj]:
        index = self._indices.get(index_name)
        if index is None:
            raise KeyError(f"index {index_name!r} does not exist")
        bucket = index.get(value)
        if not bucket:
            return []
        items = self.items
        return [items[k] for k in bucket]

    def keys_by_index(self, index_name: str, value: str) -> list[str]:
        index = self._indices.get(index_name)
        if index is None:
            raise KeyError(f"index {index_name!r} does not exist")
        return list(index.get(value) or ())

    def indexer(self, index_name: str) -> IndexFunc | None:
        return self._indexers.get(index_name)


class Lister:
    """Read-only access to an informer's store. Returned objects must not be modified."""

    def __init__(self, store: IndexedStore) -> None:
        self._store = store

    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self._store.items.get(f"{namespace}/{name}" if namespace else name)

    def get_by_key(self, k: str) -> Obj | None:
        return self._store.items.get(k)

    def by_index(self, index_name: str, value: str) -> list[Obj]:
        """Objects the named indexer filed under `value`; KeyError for an unknown index."""
        return self._store.by_index(index_name, value)

    def keys(self) -> list[str]:
        return list(self._store.items)

    def __len__(self) -> int:
        return len(self._store.items)

    def indexer(self, index_name: str) -> IndexFunc | None:
        """The function behind an index (the mutation cache files its own objects with it)."""
        return self._store.indexer(index_name)

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        """Objects in `namespace` (None or "": all namespaces) matching `label_selector`;
        an unparsable selector raises a 400 StatusError."""
        if namespace:
            objs = self._store.by_index(NAMESPACE_INDEX, namespace)
        else:
            objs = list(self._store.items.values())
        if not label_selector:
            return objs
        selector = LabelSelector.parse(label_selector)
        return [obj for obj in objs if selector.matches(labels(obj))]
