"""Strategic merge patch with apimachinery's semantics, driven by the `patch_schema` tables.

Maps merge (null deletes); merge-strategy lists merge by merge key or as sets; others replace.
Directives: `$patch`, `$retainKeys`, `$deleteFromPrimitiveList/<f>`, `$setElementOrder/<f>`.
Order follows upstream normalizeElementOrder (patch order first where the live order is unknown).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from draplane.api import errors
from draplane.api.errors import StatusError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.api.patch_schema import FieldStrategy, item_path, schema_for, strategy_at
from draplane.api.schema.model import Schemas

__all__ = ["apply_strategic_merge_patch", "json_kind", "scalar_id"]

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"
SET_ELEMENT_ORDER = "$setElementOrder/"


def apply_strategic_merge_patch(obj: Obj, patch: Any, rt: ResourceType, schemas: Schemas) -> Obj:
    """Apply a strategic merge patch to a copy of `obj` (of kind `rt` as `schemas` has it); the
    inputs are left untouched."""
    if not isinstance(patch, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(patch)} into Go value of type "
            "map[string]interface {}"
        )
    merged = _Merger(schema_for(schemas, rt)).merge_map(deep_copy(obj), deep_copy(patch), path="")
    return merged if merged is not None else {}


def json_kind(value: Any) -> str:
    """The JSON type name Go's decoder reports ("object", "array", "string", ...)."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "null"


def _go_map(value: Obj) -> str:
    """A map formatted like Go's %v, for error messages that name the offending element."""
    inner = " ".join(f"{k}:{_go_value(v)}" for k, v in sorted(value.items()))
    return f"map[{inner}]"


def _go_value(value: Any) -> str:
    if isinstance(value, dict):
        return _go_map(value)
    if isinstance(value, list):
        return "[" + " ".join(_go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _no_merge_key(item: Obj, merge_key: str) -> StatusError:
    return errors.bad_request(
        f"map: {_go_map(item)} does not contain declared merge key: {merge_key}"
    )


def scalar_id(value: Any) -> tuple[str, Any]:
    """A hashable identity with JSON equality (true is not 1, 1 equals 1.0)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", float(value))
    if isinstance(value, dict | list):
        return ("json", repr(value))
    return (type(value).__name__, value)


class _Merger:
    def __init__(self, schema: Mapping[str, FieldStrategy]) -> None:
        self._schema = schema

    def merge_map(self, original: Obj, patch: Obj, *, path: str) -> Obj | None:
        """Merge `patch` into `original` (both owned copies). None: delete the map."""
        directive = patch.pop(DIRECTIVE, None)
        if directive == "replace":
            # The patch is taken literally; merging it into {} strips nested directives.
            return self.merge_map({}, patch, path=path)
        if directive == "delete":
            return None
        if directive not in (None, "merge"):
            raise errors.bad_request(
                f"unknown patch type: {_go_value(directive)} in map: {_go_map(patch)}"
            )
        _apply_retain_keys(original, patch)
        orders: dict[str, Any] = {}
        deletions: dict[str, Any] = {}
        for key in [k for k in patch if k.startswith("$")]:
            if key.startswith(SET_ELEMENT_ORDER):
                orders[key.removeprefix(SET_ELEMENT_ORDER)] = patch.pop(key)
            elif key.startswith(DELETE_FROM_PRIMITIVE_LIST):
                deletions[key.removeprefix(DELETE_FROM_PRIMITIVE_LIST)] = patch.pop(key)
        for field, values in deletions.items():
            _delete_from_primitive_list(original, field=field, values=values)
        for field, order in orders.items():
            self._merge_ordered_field(original, field=field, patch=patch, order=order, path=path)
        for field, value in patch.items():
            if field not in orders:
                self._merge_field(original, field=field, value=value, path=path)
        return original

    def _merge_field(self, original: Obj, *, field: str, value: Any, path: str) -> None:
        child = f"{path}.{field}" if path else field
        if value is None:
            original.pop(field, None)
            return
        current = original.get(field)
        strategy = strategy_at(self._schema, child)
        if isinstance(value, dict):
            base = current if isinstance(current, dict) and not strategy.replaces else {}
            merged = self.merge_map(base, value, path=child)
            if merged is None:
                original.pop(field, None)
            else:
                original[field] = merged
        elif isinstance(value, list) and strategy.merges:
            base_list = current if isinstance(current, list) else []
            original[field] = self.merge_list(base_list, value, strategy=strategy, path=child)
        else:
            original[field] = value

    def _merge_ordered_field(
        self, original: Obj, *, field: str, patch: Obj, order: Any, path: str
    ) -> None:
        """`$setElementOrder/<field>`: merge the field, then impose the order."""
        if not isinstance(order, list):
            raise errors.bad_request("invalid patch format of setElementOrder list")
        server_order = original.get(field)
        if field in patch:
            self._merge_field(original, field=field, value=patch[field], path=path)
        merged = original.get(field)
        if not isinstance(merged, list):
            return
        child = f"{path}.{field}" if path else field
        merge_key = strategy_at(self._schema, child).merge_key
        original[field] = _normalize_order(
            merged,
            patch_order=order,
            server_order=server_order if isinstance(server_order, list) else [],
            merge_key=merge_key if _all_maps(merged) else "",
        )

    def merge_list(
        self, original: list[Any], patch: list[Any], *, strategy: FieldStrategy, path: str
    ) -> list[Any]:
        if not original and not patch:
            return original
        maps = _element_kind(original, patch, path=path)
        if not maps:
            merged = _dedupe([*original, *patch])
            return _normalize_order(merged, patch_order=patch, server_order=original, merge_key="")
        key = strategy.merge_key
        if not key:
            raise errors.bad_request(f"cannot merge lists without merge key for {path}")
        original, items = _special_elements(original, patch, key=key)
        merged = list(original)
        # Position of the first element with each merge key value: one pass, not one per item.
        positions: dict[tuple[str, Any], int] = {}
        for index, element in enumerate(merged):
            if isinstance(element, dict) and key in element:
                positions.setdefault(scalar_id(element[key]), index)
        for item in items:
            if key not in item:
                raise _no_merge_key(item, key)
            wanted = scalar_id(item[key])
            at = positions.get(wanted)
            if at is None:
                positions[wanted] = len(merged)
                merged.append(self.merge_map({}, item, path=item_path(path)) or {})
            else:
                merged[at] = self.merge_map(merged[at], item, path=item_path(path)) or {}
        return _normalize_order(merged, patch_order=items, server_order=original, merge_key=key)


def _apply_retain_keys(original: Obj, patch: Obj) -> None:
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise errors.bad_request("invalid patch format of retainKeys")
    keep = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if value is not None and not key.startswith("$") and key not in keep:
            raise errors.unprocessable("patch content doesn't match retainKeys list")
    for key in [k for k in original if k not in keep]:
        del original[key]


def _delete_from_primitive_list(original: Obj, *, field: str, values: Any) -> None:
    if not isinstance(values, list) or any(isinstance(v, dict | list) for v in values):
        raise errors.bad_request("invalid patch format of primitive list")
    current = original.get(field)
    if not isinstance(current, list):
        return
    doomed = {scalar_id(v) for v in values}
    original[field] = [
        v for v in current if isinstance(v, dict | list) or scalar_id(v) not in doomed
    ]


def _element_kind(original: list[Any], patch: list[Any], *, path: str) -> bool:
    """True when the elements are maps, False for primitives; mixing them is an error."""
    kinds = set()
    for value in (*original, *patch):
        if isinstance(value, list):
            raise errors.unprocessable("lists of lists are not supported")
        kinds.add(isinstance(value, dict))
    if len(kinds) > 1:
        raise errors.bad_request(f"list element types are not identical in {path}")
    return kinds == {True}


def _all_maps(values: list[Any]) -> bool:
    return bool(values) and all(isinstance(v, dict) for v in values)


def _special_elements(
    original: list[Any], patch: list[Any], *, key: str
) -> tuple[list[Any], list[Obj]]:
    """Apply `$patch` elements: delete drops matching entries, replace drops the live list."""
    plain: list[Obj] = []
    replace = False
    doomed: set[tuple[str, Any]] = set()
    for item in patch:
        directive = item.get(DIRECTIVE)
        if directive is None:
            plain.append(item)
        elif directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            doomed.add(scalar_id(item[key]))
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise errors.bad_request("merging lists cannot yet be specified in the patch")
        else:
            raise errors.bad_request(
                f"unknown patch type: {_go_value(directive)} in map: {_go_map(item)}"
            )
    if doomed:
        original = [e for e in original if not (isinstance(e, dict) and _key_id(e, key) in doomed)]
    return ([] if replace else original), plain


def _key_id(element: Obj, key: str) -> tuple[str, Any] | None:
    return scalar_id(element[key]) if key in element else None


def _dedupe(values: list[Any]) -> list[Any]:
    seen: set[tuple[str, Any]] = set()
    out: list[Any] = []
    for value in values:
        ident = scalar_id(value)
        if ident not in seen:
            seen.add(ident)
            out.append(value)
    return out


def _normalize_order(
    merged: list[Any], *, patch_order: list[Any], server_order: list[Any], merge_key: str
) -> list[Any]:
    """Upstream normalizeElementOrder: patch items in patch order, server-only items in live
    order, interleaved where both orders are known (patch items win ties)."""

    def ident(value: Any) -> tuple[str, Any] | None:
        if merge_key:
            if not isinstance(value, dict) or merge_key not in value:
                return None
            return scalar_id(value[merge_key])
        return scalar_id(value)

    def positions(values: list[Any]) -> dict[Any, int]:
        out: dict[Any, int] = {}
        for index, value in enumerate(values):
            out.setdefault(ident(value), index)
        return out

    in_patch = positions([v for v in patch_order if not _is_delete(v)])
    in_server = positions(server_order)
    patched = sorted((v for v in merged if ident(v) in in_patch), key=lambda v: in_patch[ident(v)])
    server_only = sorted(
        (v for v in merged if ident(v) not in in_patch),
        key=lambda v: in_server.get(ident(v), math.inf),
    )
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patched):
        if j >= len(patched):
            out.append(server_only[i])
            i += 1
            continue
        left = in_server.get(ident(server_only[i])) if i < len(server_only) else None
        right = in_server.get(ident(patched[j]))
        if left is not None and right is not None and left < right:
            out.append(server_only[i])
            i += 1
        else:
            out.append(patched[j])
            j += 1
    return out


def _is_delete(value: Any) -> bool:
    return isinstance(value, dict) and value.get(DIRECTIVE) == "delete"
