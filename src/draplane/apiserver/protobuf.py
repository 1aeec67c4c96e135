"""Decoding the Kubernetes protobuf envelope for the kinds whose declaration names a schema.

kubectl 1.32 posts core/v1 Namespace and ConfigMap, and the review and TokenRequest bodies of
`auth whoami`, `auth can-i`, `create token`, `create serviceaccount` and `create
(cluster)role(binding)`, as `application/vnd.kubernetes.protobuf` (magic
`k8s\\0` + runtime.Unknown{typeMeta, raw}) and does not retry as JSON. This decodes those kinds
into the JSON dict they stand for; zero values are dropped, as Go's `omitempty` would.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from draplane.api import errors

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class F:
    """One field of a message schema: JSON name, value type, repeated or not."""

    name: str
    type: Any  # "string" | "bytes" | "int" | "bool" | "time" | "map" | "map_bytes" | schema dict
    repeated: bool = False


Schema = dict[int, F]

# google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

TIME: Schema = {1: F("seconds", "int"), 2: F("nanos", "int")}
_OWNER_REF: Schema = {
    1: F("kind", "string"),
    3: F("name", "string"),
    4: F("uid", "string"),
    5: F("apiVersion", "string"),
    6: F("controller", "bool"),
    7: F("blockOwnerDeletion", "bool"),
}
OBJECT_META: Schema = {
    1: F("name", "string"),
    2: F("generateName", "string"),
    3: F("namespace", "string"),
    5: F("uid", "string"),
    6: F("resourceVersion", "string"),
    7: F("generation", "int"),
    8: F("creationTimestamp", "time"),
    9: F("deletionTimestamp", "time"),
    10: F("deletionGracePeriodSeconds", "int"),
    11: F("labels", "map"),
    12: F("annotations", "map"),
    13: F("ownerReferences", _OWNER_REF, repeated=True),
    14: F("finalizers", "string", repeated=True),
}


class WireError(ValueError):
    """Bytes that are not a well-formed protobuf message (a 400 for a request body)."""


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the varint at `pos`."""
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise WireError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) triples; value is an int or bytes. One-byte varints
    (most tags and lengths) are read inline."""
    out: list[tuple[int, int, Any]] = []
    pos, end = 0, len(buf)
    while pos < end:
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = read_varint(buf, pos)
        wire = tag & 7
        value: Any
        if wire == 2:
            size = buf[pos] if pos < end else 0x80
            if size < 0x80:
                pos += 1
            else:
                size, pos = read_varint(buf, pos)
            if pos + size > end:
                raise WireError("truncated length-delimited field")
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 0:
            value = buf[pos] if pos < end else 0x80
            if value < 0x80:
                pos += 1
            else:
                value, pos = read_varint(buf, pos)
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if pos + width > end:
                raise WireError("truncated fixed-width field")
            value, pos = buf[pos : pos + width], pos + width
        else:
            raise WireError(f"unsupported wire type {wire}")
        out.append((tag >> 3, wire, value))
    return out


_SMALL = [bytes((n,)) for n in range(0x80)]
_LENGTH_KEYS = [bytes((n << 3 | 2,)) for n in range(16)]
"""One-byte keys of length-delimited fields 0..15."""


def encode_varint(value: int) -> bytes:
    """A varint; a negative value as its 64-bit two's complement (10 bytes), as Go writes
    a negative int32 or int64."""
    if 0 <= value < 0x80:
        return _SMALL[value]
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length_delimited(number: int, data: bytes) -> bytes:
    """Field `number`, wire type 2 (string, bytes, message), holding `data`."""
    key = _LENGTH_KEYS[number] if number < 16 else encode_varint(number << 3 | 2)
    size = len(data)
    return key + (_SMALL[size] if size < 0x80 else encode_varint(size)) + data


def wrap(api_version: str, kind: str, raw: bytes) -> bytes:
    """The `k8s\\0` envelope around a message: runtime.Unknown{typeMeta{apiVersion, kind}, raw,
    contentEncoding, contentType}, the last two empty, as upstream's protobuf serializer
    writes it."""
    type_meta = length_delimited(1, api_version.encode()) + length_delimited(2, kind.encode())
    unknown = length_delimited(1, type_meta) + length_delimited(2, raw)
    return MAGIC + unknown + length_delimited(3, b"") + length_delimited(4, b"")


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw message) of an enveloped body; WireError when it is not one."""
    if not body.startswith(MAGIC):
        raise WireError("the body does not start with the Kubernetes protobuf magic number")
    try:
        type_meta, raw = _envelope(body[len(MAGIC) :])
    except UnicodeDecodeError as err:
        raise WireError(f"the envelope's type is not UTF-8: {err}") from err
    kind = str(type_meta.get("kind", ""))
    if not kind:
        raise WireError("Object 'Kind' is missing in the protobuf envelope")
    return str(type_meta.get("apiVersion", "")), kind, raw


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _format_time(raw: bytes) -> str | None:
    t = _message(raw, TIME)
    if not t.get("seconds") and not t.get("nanos"):
        return None
    seconds = t.get("seconds", 0)
    if not _MIN_SECONDS <= seconds <= _MAX_SECONDS:
        raise WireError(f"timestamp seconds {seconds} out of range")
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _map_entry(raw: bytes, *, as_bytes: bool) -> tuple[str, str]:
    key, value = "", ""
    for number, wire, v in fields(raw):
        if wire != 2:
            continue
        if number == 1:
            key = v.decode()
        elif number == 2:
            value = base64.b64encode(v).decode() if as_bytes else v.decode()
    return key, value


def _quantity_entry(raw: bytes) -> tuple[str, str]:
    """A map entry whose value is a resource.Quantity message ({string})."""
    entry = _message(raw, {1: F("key", "string"), 2: F("value", {1: F("string", "string")})})
    return str(entry.get("key", "")), str((entry.get("value") or {}).get("string", ""))


def _value(field: F, wire: int, v: Any) -> Any:
    kind = field.type
    if isinstance(kind, dict):
        return _message(v, kind) if wire == 2 else None
    if kind == "string":
        return v.decode() if wire == 2 else None
    if kind == "int":
        return _signed(v) if wire == 0 else None
    if kind == "bool":
        return bool(v) if wire == 0 else None
    if kind == "time":
        return _format_time(v) if wire == 2 else None
    if kind == "intstr":
        return _int_or_string(v) if wire == 2 else None
    raise WireError(f"unknown schema type {kind}")


def _int_or_string(raw: bytes) -> int | str:
    """intstr.IntOrString: {type (0 int, 1 string), intVal, strVal}."""
    t = _message(raw, {1: F("type", "int"), 2: F("intVal", "int"), 3: F("strVal", "string")})
    return str(t.get("strVal", "")) if t.get("type") == 1 else int(t.get("intVal", 0))


_KEEP_ZERO = ("int0", "bool0")
"""Optional (pointer) fields: a set zero is kept (`replicas: 0`, `suspend: false`)."""


def _message(buf: bytes, schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, v in fields(buf):
        field = schema.get(number)
        if field is None:
            continue
        if field.type in ("map", "map_bytes", "map_quantity"):
            if wire == 2:
                if field.type == "map_quantity":
                    k, val = _quantity_entry(v)
                else:
                    k, val = _map_entry(v, as_bytes=field.type == "map_bytes")
                out.setdefault(field.name, {})[k] = val
            continue
        if field.type in _KEEP_ZERO:
            if wire == 0:
                out[field.name] = _signed(v) if field.type == "int0" else bool(v)
            continue
        value = _value(field, wire, v)
        if field.repeated:
            out.setdefault(field.name, []).append(value)
        elif value not in (None, "", 0, False, {}):
            out[field.name] = value
    return out


def decode(body: bytes, schema_for: Callable[[str, str], Schema | None]) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object whose kind has a schema (`schema_for(apiVersion,
    kind)`, the kinds' declarations); 415 for other kinds, 400 for malformed data."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("protobuf body does not start with the Kubernetes magic number")
    try:
        type_meta, raw = _envelope(body[len(MAGIC) :])
        api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
        schema = schema_for(api_version, kind)
        if schema is None:
            raise errors.unsupported_media_type(f"{CONTENT_TYPE} ({api_version} {kind})")
        return {"kind": kind, "apiVersion": api_version, **_message(raw, schema)}
    except (WireError, UnicodeDecodeError) as err:
        raise errors.bad_request(f"cannot decode protobuf body: {err}") from err


def _envelope(buf: bytes) -> tuple[dict[str, Any], bytes]:
    type_meta: dict[str, Any] = {}
    raw = b""
    for number, wire, v in fields(buf):
        if wire != 2:
            continue
        if number == 1:
            type_meta = _message(v, {1: F("apiVersion", "string"), 2: F("kind", "string")})
        elif number == 2:
            raw = v
        elif number == 3 and v:
            raise WireError(f"unsupported contentEncoding {v.decode(errors='replace')!r}")
    return type_meta, raw


# -- well-known messages: Timestamp, IntOrString, wrappers ----------------------------------


def int32(value: int) -> int:
    """A varint read as Go's int32 (the low 32 bits, signed)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def int64(value: int) -> int:
    """A varint read as Go's int64."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def encode_int_or_string(value: Any) -> bytes:
    """intstr.IntOrString {1: type (0 int, 1 string), 2: intVal, 3: strVal} of a JSON value."""
    if isinstance(value, str):
        return b"\x08\x01" + length_delimited(3, value.encode())
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not an int or string")
    return b"\x08\x00\x10" + encode_varint(value)


def decode_int_or_string(data: bytes) -> int | str:
    """The JSON value of an intstr.IntOrString message."""
    kind, int_val, str_val = 0, 0, b""
    for number, wire, value in fields(data):
        if number == 1 and wire == 0:
            kind = value
        elif number == 2 and wire == 0:
            int_val = value
        elif number == 3 and wire == 2:
            str_val = value
    return str_val.decode() if kind == 1 else int32(int_val)


def first_field(data: bytes, wire: int) -> Any:
    """Field 1 of a wrapper message (Quantity, Duration, RawExtension), None when absent."""
    found = None
    for number, found_wire, value in fields(data):
        if number == 1 and found_wire == wire:
            found = value
    return found


@lru_cache(maxsize=4096)
def encode_timestamp(value: str) -> bytes:
    """metav1.Time or MicroTime {1: seconds, 2: nanos} of an RFC 3339 time."""
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    return b"\x08" + encode_varint(seconds) + b"\x10" + encode_varint(moment.microsecond * 1000)


@lru_cache(maxsize=4096)
def decode_timestamp(data: bytes, *, micro: bool) -> str | None:
    """The RFC 3339 JSON form of a Timestamp: seconds (metav1.Time, as Go's unmarshalling
    truncates) or microseconds (MicroTime); None for the empty message (the zero time)."""
    if not data:
        return None
    parts = {n: v for n, w, v in fields(data) if w == 0}
    seconds, nanos = int64(parts.get(1, 0)), int32(parts.get(2, 0))
    if not _MIN_SECONDS <= seconds <= _MAX_SECONDS:
        raise WireError(f"timestamp seconds {seconds} out of range")
    moment = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{max(nanos, 0) // 1000 % 1000000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
