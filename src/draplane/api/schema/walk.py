"""Objects against their schema: the decoding step (JSON types and unknown fields) and the
serialization of fields Go always writes.

Both walk the structs of one Kubernetes version's `Schemas`, which the caller passes.

`decode` is what kube-apiserver's strict JSON decoding into the Go types does: every field of
the wrong JSON type becomes a `TypeError_` (path, value, detail: a FieldValueTypeInvalid
cause), every field the type does not have is an unknown field (`spec.containers[0].foo`),
optionally removed. Null is accepted anywhere (Go
leaves the zero value).

`normalize` is what encoding the decoded Go value back does: non-pointer structs appear as `{}`,
non-pointer times as `null`, fields without `omitempty` with their zero value, and nulls of
omitempty fields disappear.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from draplane.api.schema.model import Arr, Schemas, Struct, Type, is_struct

_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)
_REPORTED_AT_MAP = frozenset({"labels", "annotations", "nodeSelector"})
"""Maps whose value type errors name the map, not the key (as the label validation does)."""

_INTEGER = "must be an integer"
_DETAIL = {
    "string": "must be a string",
    "byte": "must be a string",
    "int32": _INTEGER,
    "int64": _INTEGER,
    "boolean": "must be a boolean",
    "double": "must be a number",
    "quantity": "must be a quantity (a string or a number)",
    "intorstring": "must be an integer or a string",
    "time": "must be an RFC 3339 timestamp",
    "microtime": "must be an RFC 3339 timestamp",
    "object": "must be an object",
}


def _is(kind: str, value: Any) -> bool:
    if kind in ("string", "byte"):
        return isinstance(value, str)
    if kind in ("int32", "int64"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("double", "quantity", "intorstring"):
        if isinstance(value, bool):
            return False
        if kind == "intorstring":
            return isinstance(value, str | int)
        return isinstance(value, int | float) or (kind == "quantity" and isinstance(value, str))
    if kind in ("time", "microtime"):
        return isinstance(value, str) and (not value or _RFC3339.fullmatch(value) is not None)
    if kind == "object":
        return isinstance(value, dict)
    return True  # json


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_quantity(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def _is_int_or_string(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _is_time(value: Any) -> bool:
    return isinstance(value, str) and (not value or _RFC3339.fullmatch(value) is not None)


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _is_any(value: Any) -> bool:
    return True


_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": _is_str,
    "byte": _is_str,
    "int32": _is_int,
    "int64": _is_int,
    "boolean": _is_bool,
    "double": _is_number,
    "quantity": _is_quantity,
    "intorstring": _is_int_or_string,
    "time": _is_time,
    "microtime": _is_time,
    "object": _is_dict,
    "json": _is_any,
}
"""`_is` for each primitive, one call per field on the decoding walk's hot path."""


@dataclass(frozen=True, slots=True)
class TypeError_:
    path: str
    value: Any
    detail: str


@dataclass
class Decoded:
    """What decoding found: type errors and unknown fields (paths, in document order)."""

    errors: list[TypeError_] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    prune: bool = False


Lookup = Callable[[str], Struct]


def decode(schemas: Schemas, struct: Struct, obj: Any, *, prune: bool = False) -> Decoded:
    """Decode `obj` as `struct`, its nested structs looked up in `schemas`."""
    out = Decoded(prune=prune)
    _struct(struct, obj, "", out, schemas.get)
    return out


def _struct(struct: Struct, value: Any, path: str, out: Decoded, get: Lookup) -> None:
    if not isinstance(value, dict):
        out.errors.append(TypeError_(path, value, "must be an object"))
        return
    prefix = f"{path}." if path else ""
    drop: list[str] = []
    by_name = struct.by_name
    checks = _CHECKS
    for key, item in value.items():
        fld = by_name.get(key)
        if fld is None:
            if not struct.preserve:
                out.unknown.append(prefix + key)
                drop.append(key)
            continue
        if item is None:
            continue
        t = fld.type
        # A primitive field is checked here, its path built only for an error.
        check = checks.get(t) if type(t) is str else None
        if check is None:
            _value(t, item, prefix + key, out, key, get)
        elif not check(item):
            out.errors.append(TypeError_(prefix + key, item, _DETAIL[t]))  # type: ignore[index]
    if out.prune:
        for key in drop:
            del value[key]


def _value(t: Type, value: Any, path: str, out: Decoded, name: str, get: Lookup) -> None:
    if isinstance(t, str):
        if is_struct(t):
            _struct(get(t), value, path, out, get)
        elif not _is(t, value):
            out.errors.append(TypeError_(path, value, _DETAIL[t]))
    elif isinstance(t, Arr):
        if not isinstance(value, list):
            out.errors.append(TypeError_(path, value, "must be a list"))
            return
        item_type = t.item
        check = _CHECKS.get(item_type) if type(item_type) is str else None
        for i, item in enumerate(value):
            if item is None:
                continue
            if check is None:
                _value(item_type, item, f"{path}[{i}]", out, name, get)
            elif not check(item):
                detail = _DETAIL[item_type]  # type: ignore[index]
                out.errors.append(TypeError_(f"{path}[{i}]", item, detail))
    else:
        if not isinstance(value, dict):
            out.errors.append(TypeError_(path, value, "must be an object"))
            return
        at_map = name in _REPORTED_AT_MAP
        for key, item in value.items():
            if item is not None:
                sub = path if at_map else f"{path}[{key}]"
                if is_struct(t.value) and isinstance(item, dict):
                    sub = f"{path}.{key}"
                _value(t.value, item, sub, out, name, get)


_ZERO: dict[str, Any] = {
    "string": "",
    "byte": "",
    "int32": 0,
    "int64": 0,
    "boolean": False,
    "double": 0,
    "time": None,
    "microtime": None,
}


def normalize(schemas: Schemas, struct: Struct, obj: dict[str, Any]) -> None:
    """Give `obj` (of type `struct`, already decoded) the fields Go always serializes, its
    nested structs looked up in `schemas`."""
    _normalize(struct, obj, schemas.get)


def _normalize(struct: Struct, obj: dict[str, Any], get: Lookup) -> None:
    for fld in struct.emitted:
        if obj.get(fld.name) is None:
            t = fld.type
            if is_struct(t):
                obj[fld.name] = {}
            elif isinstance(t, str) and t in _ZERO:
                obj[fld.name] = _ZERO[t]
    by_name = struct.by_name
    nulls = []
    for key, value in obj.items():
        if value is None:
            declared = by_name.get(key)
            if declared is not None and not declared.emit:
                nulls.append(key)
            continue
        nested = struct.nested.get(key)
        if nested is not None:
            _normalize_value(nested, value, get)
    for key in nulls:
        del obj[key]


def _normalize_value(t: Type, value: Any, get: Lookup) -> None:
    if isinstance(t, str):
        if isinstance(value, dict):
            _normalize(get(t), value, get)
    elif isinstance(t, Arr):
        if isinstance(value, list):
            item_struct = get(t.item)  # type: ignore[arg-type]
            for item in value:
                if isinstance(item, dict):
                    _normalize(item_struct, item, get)
    elif isinstance(value, dict):
        value_struct = get(t.value)  # type: ignore[arg-type]
        for item in value.values():
            if isinstance(item, dict):
                _normalize(value_struct, item, get)
