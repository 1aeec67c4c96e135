"""The schema-driven protobuf codec: a kind's JSON dict to and from the message upstream's
`generated.proto` describes, read off the `Struct`/`Field` model (`Field.tag`, `wire`,
`pointer`, `embedded`); the wire primitives and the `k8s\\0` envelope are `protobuf`'s.

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
fields. A kind is served in protobuf only when its whole struct tree is numbered
(`unnumbered`).
"""

from __future__ import annotations

import base64
import re
import struct as _struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import orjson

from draplane.api import limits
from draplane.api.schema.model import Arr, Field, Map, Schemas, Struct, Type, is_struct
from draplane.apiserver.protobuf import WireError, encode_varint, fields, length_delimited, wrap

TYPE_META = ("apiVersion", "kind")
_VARINT = ("int32", "int64", "boolean")
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799
"""google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class EncodeError(ValueError):
    """A JSON value the schema's protobuf form cannot hold (the response falls back to JSON)."""


# -- which kinds can be served -------------------------------------------------------------


@lru_cache(maxsize=1024)
def unnumbered(schemas: Schemas, name: str) -> tuple[str, ...]:
    """The JSON paths (`spec.template.spec.volumes[].name`) in struct `name`'s tree that have
    no protobuf form: a field without a number (other than TypeMeta), a free-form `object`
    without `wire`, a struct keeping unknown fields. Empty: the kind is fully numbered."""
    out: list[str] = []
    _walk(schemas, name, "", set(), out)
    return tuple(out)


def _walk(schemas: Schemas, name: str, prefix: str, seen: set[str], out: list[str]) -> None:
    if name in seen:
        return
    seen.add(name)
    found = schemas.structs.get(name)
    if found is None:
        out.append(f"{prefix or '.'} (unregistered struct {name})")
        return
    if found.preserve:
        out.append(f"{prefix or '.'} (unknown fields kept)")
    for fld in found.fields:
        path = f"{prefix}.{fld.name}" if prefix else fld.name
        if fld.tag == 0:
            if fld.name not in TYPE_META:
                out.append(path)
            continue
        leaf, path = _leaf(fld.type, path)
        if leaf == "object" and fld.wire != "raw":
            out.append(f"{path} (free-form)")
        elif is_struct(leaf):
            _walk(schemas, leaf, path, seen, out)


def _leaf(t: Type, path: str) -> tuple[str, str]:
    while not isinstance(t, str):
        if isinstance(t, Arr):
            t, path = t.item, path + "[]"
        else:
            t, path = t.value, path + "{}"
    return t, path


# -- encoding ------------------------------------------------------------------------------


def encode(schemas: Schemas, name: str, obj: dict[str, Any]) -> bytes:
    """The protobuf message of `obj`, a JSON dict of struct `name` (TypeMeta left out)."""
    try:
        return _encode_struct(schemas, schemas.get(name), obj)
    except (TypeError, ValueError, KeyError, OverflowError) as err:
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
        return b"".join(
            _encode_value(schemas, fld, number, t.item, item) for item in value if item is not None
        )
    if isinstance(t, Map):
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


def _encode_time(value: str) -> bytes:
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    nanos = moment.microsecond * 1000
    return _key(1, 0) + encode_varint(seconds) + _key(2, 0) + encode_varint(nanos)


# -- decoding ------------------------------------------------------------------------------


def decode(schemas: Schemas, name: str, raw: bytes) -> dict[str, Any]:
    """The JSON dict of protobuf message `raw` of struct `name`; WireError when malformed."""
    try:
        return _decode_struct(schemas, schemas.get(name), raw, 1)
    except (UnicodeDecodeError, orjson.JSONDecodeError, OverflowError) as err:
        raise WireError(str(err)) from err


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


# -- metav1.Duration's JSON form: Go's time.Duration strings ---------------------------------

_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9}
_UNITS.update({"m": 60 * 10**9, "h": 3600 * 10**9})
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (`1h2m3.5s`, `-300ms`, `0`)."""
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text.removeprefix("+"))
    if body == "0":
        return 0
    pos, total = 0, 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != pos:
            break
        number, unit = match.groups()
        whole, _, frac = number.partition(".")
        scale = _UNITS[unit]
        total += int(whole or 0) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)
        pos = match.end()
    if pos != len(body) or not body:
        raise ValueError(f"invalid duration {text!r}")
    return sign * total


def format_duration(ns: int) -> str:
    """Go's `time.Duration.String()`: `1h0m0s`, `1.5s`, `500ms`, `0s`."""
    if ns == 0:
        return "0s"
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u < 10**9:
        for unit, size in (("ns", 1), ("µs", 10**3), ("ms", 10**6)):
            if u < size * 1000:
                return sign + _fraction(u, size) + unit
    hours, rest = divmod(u, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    text = _fraction(rest, 10**9) + "s"
    if hours:
        text = f"{hours}h{minutes}m{text}"
    elif minutes:
        text = f"{minutes}m{text}"
    return sign + text


def _fraction(value: int, size: int) -> str:
    whole, rest = divmod(value, size)
    if not rest:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}." + f"{rest:0{digits}d}".rstrip("0")


# -- kinds, envelopes and watch frames -------------------------------------------------------

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_META_KINDS = frozenset({"Status", "DeleteOptions", "PartialObjectMetadata", "WatchEvent"})
_META_KINDS |= {"PartialObjectMetadataList"}


def struct_name(schemas: Schemas, api_version: str, kind: str) -> str | None:
    """The struct of a body of apiVersion/kind: a served kind's (custom resources have none),
    or a meta/v1 one (Status, DeleteOptions, PartialObjectMetadata, ...)."""
    group, _, version = api_version.rpartition("/")
    found = schemas.kind_struct(group, version, kind)
    if found is not None:
        return found.name
    if kind in _META_KINDS and group in ("", "meta.k8s.io"):
        return META + kind
    return None


def servable(schemas: Schemas, api_version: str, kind: str) -> str | None:
    """The struct of apiVersion/kind when it is fully numbered (protobuf can carry it)."""
    name = struct_name(schemas, api_version, kind)
    return name if name is not None and not unnumbered(schemas, name) else None


def encode_object(schemas: Schemas, obj: dict[str, Any]) -> bytes:
    """`obj` in the `k8s\\0` envelope; EncodeError when its kind cannot be served in protobuf."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    name = servable(schemas, api_version, kind)
    if name is None:
        raise EncodeError(f"{api_version} {kind} has no protobuf form")
    return wrap(api_version, kind, encode(schemas, name, obj))


def watch_frame(schemas: Schemas, event_type: str, obj: dict[str, Any]) -> bytes:
    """One frame of a protobuf watch stream, as upstream's streaming serializer writes it:
    a 4-byte big-endian length, then metav1.WatchEvent{type, object: RawExtension{raw}} without
    an envelope (the stream serializer is the raw one), whose raw is the enveloped object."""
    event = length_delimited(1, event_type.encode())
    event += length_delimited(2, length_delimited(1, encode_object(schemas, obj)))
    return len(event).to_bytes(4, "big") + event
