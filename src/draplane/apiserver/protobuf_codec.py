"""The schema-driven protobuf codec: a kind's JSON dict to and from the message upstream's
`generated.proto` describes, read off the `Struct`/`Field` model (`Field.tag`, `wire`,
`pointer`, `embedded`). The wire primitives and the `k8s\\0` envelope are `protobuf`'s; which
kinds are served, their envelopes and watch frames are `protobuf_serving`'s.

Wire forms, as upstream's generated code: strings and bytes are length-delimited, int32/int64
and bool varints (a negative int32 as a 10-byte varint), double fixed64; resource.Quantity is
{1: string}; metav1.Time and MicroTime {1: seconds, 2: nanos} (Time keeps seconds in JSON,
MicroTime microseconds); IntOrString {1: type, 2: intVal, 3: strVal}; metav1.Duration {1: int64
nanoseconds}; a free-form value (`json`, `wire="raw"`) {1: its JSON bytes}; map<string, X>
repeated {1: key, 2: value}; a list inside a list or map a message {1: repeated items}.
Repeated scalars are read packed or not. TypeMeta is not in the message (the envelope holds
it). Encoding writes a field iff the JSON holds it (a Go decoder reads an absent non-pointer
field as the zero value it would have written); decoding drops non-pointer zero values unless
the field is `emit`, as Go's omitempty would when re-encoding as JSON, and skips unknown
fields.
"""

from __future__ import annotations

import base64
import struct as _struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import orjson

from draplane.api import limits
from draplane.api.goduration import format_duration, parse_duration
from draplane.api.schema import walk
from draplane.api.schema.model import Arr, Field, Map, Schemas, Struct, Type, is_struct
from draplane.apiserver.protobuf import WireError, encode_varint, fields, length_delimited

TYPE_META = ("apiVersion", "kind")
_VARINT = ("int32", "int64", "boolean")
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799
"""google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class EncodeError(ValueError):
    """A JSON value the schema's protobuf form cannot hold (the response falls back to JSON)."""


# -- encoding ------------------------------------------------------------------------------


def encode(schemas: Schemas, name: str, obj: dict[str, Any]) -> bytes:
    """The protobuf message of `obj`, a JSON dict of struct `name` (TypeMeta left out)."""
    try:
        return _encode_struct(schemas, schemas.get(name), obj)
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as err:
        raise EncodeError(f"cannot encode {name} as protobuf: {err}") from err


def _encode_struct(schemas: Schemas, st: Struct, obj: dict[str, Any]) -> bytes:
    out: list[bytes] = []
    groups: dict[int, list[bytes]] = {}
    for fld in _plan(st).ordered:
        value = obj.get(fld.name)
        if value is None:
            continue
        target = groups.setdefault(fld.embedded, []) if fld.embedded else out
        target.append(_encode_field(schemas, fld, fld.tag, fld.type, value))
    for number, parts in groups.items():
        out.append(length_delimited(number, b"".join(parts)))
    return b"".join(out)


_PLANS: dict[int, tuple[Struct, _Plan]] = {}
"""id(struct) -> (the struct, its plan); the struct is held so its id is not reused."""


def _plan(st: Struct) -> _Plan:
    found = _PLANS.get(id(st))
    if found is not None and found[0] is st:
        return found[1]
    plan = _Plan(st)
    _PLANS[id(st)] = (st, plan)
    return plan


class _Plan:
    """A struct's fields in wire order (numbered ones only), by number, and those of its
    embedded structs by the embedded struct's number."""

    __slots__ = ("direct", "embedded", "ordered")

    def __init__(self, st: Struct) -> None:
        numbered = [fld for fld in st.fields if fld.tag]
        self.ordered = tuple(sorted(numbered, key=lambda fld: fld.embedded or fld.tag))
        self.direct: dict[int, Field] = {}
        self.embedded: dict[int, dict[int, Field]] = {}
        for fld in numbered:
            if fld.embedded:
                self.embedded.setdefault(fld.embedded, {})[fld.tag] = fld
            else:
                self.direct[fld.tag] = fld


def _encode_field(schemas: Schemas, fld: Field, number: int, t: Type, value: Any) -> bytes:
    if isinstance(t, Arr):
        if not isinstance(value, list):
            raise TypeError(f"{fld.name}: {value!r} is not a list")
        return b"".join(
            _encode_value(schemas, fld, number, t.item, item) for item in value if item is not None
        )
    if isinstance(t, Map):
        if not isinstance(value, dict):
            raise TypeError(f"{fld.name}: {value!r} is not an object")
        entries = []
        for key in sorted(value):
            entry = length_delimited(1, str(key).encode())
            if value[key] is not None:
                entry += _encode_value(schemas, fld, 2, t.value, value[key])
            entries.append(length_delimited(number, entry))
        return b"".join(entries)
    return _encode_value(schemas, fld, number, t, value)


def _encode_value(schemas: Schemas, fld: Field, number: int, t: Type, value: Any) -> bytes:
    if not isinstance(t, str):  # a list in a list or a map: a message of repeated items
        return length_delimited(number, _encode_field(schemas, fld, 1, t, value))
    if fld.wire == "duration":
        return length_delimited(number, _key(1, 0) + encode_varint(parse_duration(value)))
    if fld.wire == "raw" or t in ("json", "object"):
        return length_delimited(number, length_delimited(1, orjson.dumps(value)))
    if t in _VARINT:
        if not isinstance(value, int) or (t == "boolean") != isinstance(value, bool):
            raise TypeError(f"{fld.name}: {value!r} is not a {t}")
        return _key(number, 0) + encode_varint(int(value))
    if t == "string":
        if not isinstance(value, str):
            raise TypeError(f"{fld.name}: {value!r} is not a string")
        return length_delimited(number, value.encode())
    if t == "byte":
        return length_delimited(number, base64.b64decode(value, validate=True))
    if t == "double":
        return _key(number, 1) + _struct.pack("<d", float(value))
    if t == "quantity":
        return length_delimited(number, length_delimited(1, str(value).encode()))
    if t in ("time", "microtime"):
        return length_delimited(number, _encode_time(value))
    if t == "intorstring":
        if isinstance(value, str):
            return length_delimited(
                number, _key(1, 0) + b"\x01" + length_delimited(3, value.encode())
            )
        return length_delimited(
            number, _key(1, 0) + b"\x00" + _key(2, 0) + encode_varint(int(value))
        )
    return length_delimited(number, _encode_struct(schemas, schemas.get(t), value))


def _key(number: int, wire: int) -> bytes:
    return encode_varint(number << 3 | wire)


@lru_cache(maxsize=4096)
def _encode_time(value: str) -> bytes:
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    nanos = moment.microsecond * 1000
    return _key(1, 0) + encode_varint(seconds) + _key(2, 0) + encode_varint(nanos)


# -- decoding ------------------------------------------------------------------------------


def decode(schemas: Schemas, name: str, raw: bytes) -> dict[str, Any]:
    """The JSON dict of protobuf message `raw` of struct `name`, as Go would serialize the
    decoded object (`emit` fields present); WireError when malformed."""
    st = schemas.get(name)
    try:
        obj = _decode_struct(schemas, st, raw, 1)
    except (UnicodeDecodeError, orjson.JSONDecodeError, OverflowError) as err:
        raise WireError(str(err)) from err
    walk.normalize(schemas, st, obj)  # the fields Go's JSON encoder always writes
    return obj


def _decode_struct(schemas: Schemas, st: Struct, raw: bytes, depth: int) -> dict[str, Any]:
    if depth > limits.MAX_DEPTH:
        raise WireError(f"the object is nested more than {limits.MAX_DEPTH} levels deep")
    plan = _plan(st)
    direct, embedded = plan.direct, plan.embedded
    out: dict[str, Any] = {}
    found: dict[str, Field] = {}
    for number, wire, value in fields(raw):
        fld = direct.get(number)
        if fld is None and number in embedded and wire == 2:
            for inner, inner_wire, inner_value in fields(value):
                if (sub := embedded[number].get(inner)) is not None:
                    _decode_into(schemas, sub, inner_wire, inner_value, out, depth)
                    found[sub.name] = sub
        elif fld is not None:
            _decode_into(schemas, fld, wire, value, out, depth)
            found[fld.name] = fld
    for name, fld in found.items():
        # A struct on the wire is kept: a non-pointer one is `emit`, a pointer one was set.
        if not (fld.emit or fld.pointer or is_struct(fld.type)) and out[name] in _ZEROS:
            del out[name]
    return out


_ZEROS: tuple[Any, ...] = ("", 0, False, None, [], {})


def _decode_into(
    schemas: Schemas, fld: Field, wire: int, value: Any, out: dict[str, Any], depth: int
) -> None:
    t = fld.type
    if isinstance(t, Arr):
        items = out.setdefault(fld.name, [])
        items.extend(_decode_repeated(schemas, fld, t.item, wire, value, depth))
    elif isinstance(t, Map):
        entries = out.setdefault(fld.name, {})
        key, item = "", None
        for number, entry_wire, entry_value in fields(_want(fld, wire, 2, value)):
            if number == 1:
                key = _want(fld, entry_wire, 2, entry_value).decode()
            elif number == 2:
                item = _decode_value(schemas, fld, t.value, entry_wire, entry_value, depth)
        entries[key] = _zero(schemas, t.value) if item is None else item
    else:
        out[fld.name] = _decode_value(schemas, fld, t, wire, value, depth)


def _decode_repeated(
    schemas: Schemas, fld: Field, t: Type, wire: int, value: Any, depth: int
) -> Iterator[Any]:
    """One occurrence of a repeated field: one item, or (packed scalars) several."""
    if wire == 2 and t in _VARINT:
        pos = 0
        while pos < len(value):
            number, pos = _read_varint(value, pos)
            yield _scalar(fld, t, number)
    elif wire == 2 and t == "double" and fld.wire != "raw":
        if len(value) % 8:
            raise WireError(f"field {fld.name}: packed doubles of {len(value)} bytes")
        yield from (v for (v,) in _struct.iter_unpack("<d", value))
    else:
        yield _decode_value(schemas, fld, t, wire, value, depth)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise WireError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _want(fld: Field, wire: int, expected: int, value: Any) -> Any:
    if wire != expected:
        raise WireError(f"field {fld.name}: wrong wire type {wire}, want {expected}")
    return value


def _scalar(fld: Field, t: str, value: int) -> Any:
    value &= (1 << 64) - 1
    if t == "boolean":
        return bool(value)
    if t == "int32":
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    return value - (1 << 64) if value >= 1 << 63 else value


def _decode_value(schemas: Schemas, fld: Field, t: Type, wire: int, value: Any, depth: int) -> Any:
    if not isinstance(t, str):  # a list in a list or a map
        inner = Field(fld.name, t, "", wire=fld.wire)
        items: dict[str, Any] = {}
        for number, item_wire, item_value in fields(_want(fld, wire, 2, value)):
            if number == 1:
                _decode_into(schemas, inner, item_wire, item_value, items, depth + 1)
        return items.get(fld.name, [] if isinstance(t, Arr) else {})
    if t in _VARINT:
        return _scalar(fld, t, _want(fld, wire, 0, value))
    if t == "double":
        return _struct.unpack("<d", _want(fld, wire, 1, value))[0]
    data: bytes = _want(fld, wire, 2, value)
    if fld.wire == "duration":
        ns = _first(data, 0)
        return format_duration(_scalar(fld, "int64", ns if isinstance(ns, int) else 0))
    if fld.wire == "raw" or t in ("json", "object"):
        inner_raw = _first(data, 2)
        return orjson.loads(inner_raw) if inner_raw else None
    if t == "string":
        return data.decode()
    if t == "byte":
        return base64.b64encode(data).decode()
    if t == "quantity":
        found = _first(data, 2)
        return found.decode() if isinstance(found, bytes) else "0"
    if t in ("time", "microtime"):
        return _decode_time(data, micro=t == "microtime")
    if t == "intorstring":
        parts = {n: v for n, _, v in fields(data)}
        if parts.get(1) == 1:
            return bytes(parts.get(3, b"")).decode()
        return _scalar(fld, "int32", int(parts.get(2, 0)))
    return _decode_struct(schemas, schemas.get(t), data, depth + 1)


def _first(data: bytes, wire: int) -> Any:
    """Field 1 of a wrapper message (Quantity, Duration, RawExtension), None when absent."""
    found = None
    for number, found_wire, value in fields(data):
        if number == 1 and found_wire == wire:
            found = value
    return found


def _zero(schemas: Schemas, t: Type) -> Any:
    if isinstance(t, Arr):
        return []
    if isinstance(t, Map) or is_struct(t):
        return {}
    return {"string": "", "byte": "", "boolean": False, "quantity": "0"}.get(t, 0)


@lru_cache(maxsize=4096)
def _decode_time(data: bytes, *, micro: bool) -> str | None:
    if not data:
        return None
    parts = {n: v for n, w, v in fields(data) if w == 0}
    seconds = _scalar(Field("seconds", "int64", ""), "int64", parts.get(1, 0))
    nanos = _scalar(Field("nanos", "int32", ""), "int32", parts.get(2, 0))
    if not _MIN_SECONDS <= seconds <= _MAX_SECONDS:
        raise WireError(f"timestamp seconds {seconds} out of range")
    moment = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{max(nanos, 0) // 1000 % 1000000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
