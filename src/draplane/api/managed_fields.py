"""Managed-fields path sets: FieldsV1 encoding, collection from a config, lookups by path.

A path is a tuple of FieldsV1 elements: `f:<field>`, `k:<json of the item's map keys>` for a
list-map item, `v:<json value>` for a set value. `sp` arguments are patch_schema paths.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import orjson

from draplane.api.meta import Obj
from draplane.api.patch import json_equal
from draplane.api.patch_schema import FieldStrategy, item_path, strategy_at

__all__ = [
    "IDENTITY_METADATA",
    "SERVER_METADATA",
    "Path",
    "canonical_path",
    "child_sp",
    "collect",
    "fields_to_paths",
    "find_item",
    "indexed_lists",
    "is_element",
    "item_key",
    "lookup",
    "note_appended",
    "note_removed",
    "path_string",
    "paths_to_fields",
    "quote",
    "schema_path",
]

Path = tuple[str, ...]
"""A field path as FieldsV1 spells it: ("f:spec", "k:{\"name\":\"app\"}", "f:image")."""

# Metadata the apiserver owns: never merged from the applied config, never tracked.
SERVER_METADATA = frozenset(
    {
        "uid",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)
IDENTITY_METADATA = frozenset({"name", "namespace", "generateName", "resourceVersion"})
_UNTRACKED_METADATA = IDENTITY_METADATA | SERVER_METADATA


def child_sp(sp: str, key: str) -> str:
    return f"{sp}.{key}" if sp else key


def item_key(item: Obj, keys: tuple[str, ...]) -> str:
    picked = {k: item[k] for k in sorted(keys) if k in item}
    return "k:" + orjson.dumps(picked).decode()


def _value_key(value: Any) -> str:
    return "v:" + orjson.dumps(value).decode()


def collect(config: Obj, *, schema: Mapping[str, FieldStrategy]) -> set[Path]:
    out: set[Path] = set()
    for key, value in config.items():
        if key in ("apiVersion", "kind"):
            continue
        if key == "metadata" and isinstance(value, dict):
            tracked = {k: v for k, v in value.items() if k not in _UNTRACKED_METADATA}
            _collect_map(tracked, sp="metadata", prefix=("f:metadata",), out=out, schema=schema)
        else:
            _collect_value(value, sp=key, prefix=("f:" + key,), out=out, schema=schema)
    return out


def _collect_map(
    value: Obj, *, sp: str, prefix: Path, out: set[Path], schema: Mapping[str, FieldStrategy]
) -> None:
    for key, child in value.items():
        _collect_value(
            child, sp=child_sp(sp, key), prefix=(*prefix, "f:" + key), out=out, schema=schema
        )


def _collect_value(
    value: Any, *, sp: str, prefix: Path, out: set[Path], schema: Mapping[str, FieldStrategy]
) -> None:
    strategy = strategy_at(schema, sp)
    if isinstance(value, dict) and value:
        _collect_map(value, sp=sp, prefix=prefix, out=out, schema=schema)
    elif isinstance(value, list) and value and strategy.list_type == "map":
        for item in value:
            if not isinstance(item, dict):
                out.add(prefix)
                continue
            item_prefix = (*prefix, item_key(item, strategy.map_keys))
            out.add(item_prefix)
            _collect_map(item, sp=item_path(sp), prefix=item_prefix, out=out, schema=schema)
    elif isinstance(value, list) and value and strategy.list_type == "set":
        out.update((*prefix, _value_key(item)) for item in value)
    else:
        out.add(prefix)


def paths_to_fields(paths: set[Path]) -> Obj:
    """A path set as a FieldsV1 tree; list items carry "." (the item itself)."""
    root: Obj = {}
    for path in sorted(paths):
        node = root
        for element in path:
            node = node.setdefault(element, {})
        if path and path[-1].startswith("k:"):
            node["."] = {}
    return root


def fields_to_paths(fields: Obj, prefix: Path = ()) -> set[Path]:
    """Inverse of `paths_to_fields`: leaves and "."-marked nodes are owned paths. Elements
    draplane cannot read (not `f:`, a `k:` that is not a JSON object, a `v:` that is not
    JSON) are skipped with everything under them, so a stored entry never breaks an apply."""
    out: set[Path] = set()
    for key, child in fields.items():
        if key == ".":
            out.add(prefix)
        elif not is_element(key):
            continue
        elif isinstance(child, dict) and child:
            out |= fields_to_paths(child, (*prefix, key))
        else:
            out.add((*prefix, key))
    return out


def is_element(element: str) -> bool:
    """A FieldsV1 path element draplane understands: `f:<name>`, `k:<object>`, `v:<value>`."""
    kind, sep, raw = element.partition(":")
    if not sep or kind not in ("f", "k", "v"):
        return False
    if kind == "f":
        return True
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return kind == "v" or isinstance(value, dict)


def quote(value: Any) -> str:
    return orjson.dumps(value).decode()


def path_string(path: Path) -> str:
    """structured-merge-diff's Path.String(): `.spec.containers[name="app"].image`."""
    out = ""
    for element in path:
        kind, _, raw = element.partition(":")
        if kind == "f":
            out += "." + raw
        elif kind == "k":
            keys = orjson.loads(raw)
            out += "[" + ",".join(f"{k}={quote(v)}" for k, v in keys.items()) + "]"
        else:
            out += "[=" + raw + "]"
    return out


def lookup(obj: Any, path: Path, *, schema: Mapping[str, FieldStrategy]) -> tuple[bool, Any]:
    current = obj
    sp = ""
    for element in path:
        kind, _, raw = element.partition(":")
        if kind == "f":
            if not isinstance(current, dict) or raw not in current:
                return False, None
            current = current[raw]
            sp = child_sp(sp, raw)
        elif kind == "k":
            index = find_item(current, raw, keys=strategy_at(schema, sp).map_keys)
            if index is None:
                return False, None
            current = current[index]
            sp = item_path(sp)
        else:
            wanted = orjson.loads(raw)
            if not isinstance(current, list) or not any(json_equal(v, wanted) for v in current):
                return False, None
            current = wanted
    return True, current


def find_item(values: Any, raw_key: str, *, keys: tuple[str, ...]) -> int | None:
    """The index of the list-map item with key `raw_key` (a `k:` element without its prefix).

    An exact key match wins; otherwise the first item whose key fields agree wherever both set
    them, because the apiserver defaults key fields (ports[].protocol) that a config may omit.
    Within `indexed_lists()` each list is indexed once, so a lookup does not scan the list.
    """
    if not isinstance(values, list):
        return None
    cache = _INDEXES.get()
    if cache is None:
        return _ListIndex(values, keys).find(values, raw_key)
    found = cache.get((id(values), keys))
    if found is None or found[0] is not values or found[1] != len(values):
        found = cache[(id(values), keys)] = (values, len(values), _ListIndex(values, keys))
    return found[2].find(values, raw_key)


def note_appended(values: list[Any], *, keys: tuple[str, ...]) -> None:
    """Tell the index of `values` (if any) that an item was appended to it."""
    cache = _INDEXES.get()
    if cache is None:
        return
    found = cache.get((id(values), keys))
    if found is not None and found[0] is values and found[1] == len(values) - 1:
        found[2].add(len(values) - 1, values[-1])
        cache[(id(values), keys)] = (values, len(values), found[2])


def note_removed(values: list[Any], *, keys: tuple[str, ...]) -> None:
    """Drop the index of `values` after an item was removed from it."""
    cache = _INDEXES.get()
    if cache is not None:
        cache.pop((id(values), keys), None)


_INDEXES: ContextVar[dict[tuple[int, tuple[str, ...]], tuple[list[Any], int, _ListIndex]] | None]
_INDEXES = ContextVar("list_map_indexes", default=None)


@contextmanager
def indexed_lists() -> Iterator[None]:
    """Index list maps once for the duration (an apply), keyed by list identity and length."""
    token = _INDEXES.set({})
    try:
        yield
    finally:
        _INDEXES.reset(token)


def _canonical(value: Any) -> str:
    """A key value as JSON, numbers compared as JSON does (1 equals 1.0)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


class _ListIndex:
    """Where each key value occurs in one list map: exact item keys, and per key field the
    items with each value and the items without that field (for partial matches)."""

    def __init__(self, values: list[Any], keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.exact: dict[str, int] = {}
        self.with_value: dict[tuple[str, str], list[int]] = {}
        self.without: dict[str, list[int]] = {k: [] for k in keys}
        for index, item in enumerate(values):
            self.add(index, item)

    def add(self, index: int, item: Any) -> None:
        if not isinstance(item, dict):
            return
        self.exact.setdefault(item_key(item, self.keys), index)
        for k in self.keys:
            if k in item:
                self.with_value.setdefault((k, _canonical(item[k])), []).append(index)
            else:
                self.without[k].append(index)

    def find(self, values: list[Any], raw_key: str) -> int | None:
        exact = self.exact.get("k:" + raw_key)
        if exact is not None:
            return exact
        wanted: Obj = orjson.loads(raw_key)
        present = [k for k in self.keys if k in wanted]
        if not present:
            return None
        first = present[0]
        candidates = self.with_value.get((first, _canonical(wanted[first])), [])
        for index in sorted({*candidates, *self.without[first]}):
            item = values[index]
            shared = [k for k in self.keys if k in item and k in wanted]
            if shared and all(json_equal(item[k], wanted[k]) for k in shared):
                return index
        return None


def canonical_path(path: Path, obj: Obj | None, *, schema: Mapping[str, FieldStrategy]) -> Path:
    """`path` with each `k:` element spelled as the matching item of `obj` spells it, so a
    config that omits a defaulted key field (ports[].protocol) names the same item."""
    current: Any = obj
    sp = ""
    out: list[str] = []
    for element in path:
        kind, _, raw = element.partition(":")
        if kind == "k":
            keys = strategy_at(schema, sp).map_keys
            index = find_item(current, raw, keys=keys)
            current = current[index] if index is not None else None
            element = item_key(current, keys) if current is not None else element
            sp = item_path(sp)
        elif kind == "f":
            current = current.get(raw) if isinstance(current, dict) else None
            sp = child_sp(sp, raw)
        out.append(element)
    return tuple(out)


def schema_path(path: Path) -> str:
    sp = ""
    for element in path:
        kind, _, raw = element.partition(":")
        sp = child_sp(sp, raw) if kind == "f" else item_path(sp)
    return sp
