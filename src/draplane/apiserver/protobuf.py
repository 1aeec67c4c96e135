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
from datetime import UTC, datetime
from typing import Any

from draplane.api import errors

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class F:
    """One field of a message schema: JSON name, value type, repeated or not."""

    name: str
    type: Any  # "string" | "bytes" | "int" | "bool" | "time" | "microtime" | "map" | schema dict
    repeated: bool = False


Schema = dict[int, F]

# google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799

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


class _WireError(ValueError):
    pass


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise _WireError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) triples; value is an int or bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise _WireError("truncated length-delimited field")
            value, pos = buf[pos : pos + size], pos + size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, pos = buf[pos : pos + width], pos + width
        else:
            raise _WireError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _format_time(raw: bytes, *, micro: bool = False) -> str | None:
    """metav1.Time (seconds), or metav1.MicroTime (`micro`: microseconds)."""
    t = _message(raw, TIME)
    if not t.get("seconds") and not t.get("nanos"):
        return None
    seconds = t.get("seconds", 0)
    if not _MIN_SECONDS <= seconds <= _MAX_SECONDS:
        raise _WireError(f"timestamp seconds {seconds} out of range")
    moment = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.get('nanos', 0) // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _map_entry(raw: bytes, *, as_bytes: bool) -> tuple[str, str]:
    key, value = "", ""
    for number, wire, v in _fields(raw):
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
    if kind in ("time", "microtime"):
        return _format_time(v, micro=kind == "microtime") if wire == 2 else None
    if kind == "intstr":
        return _int_or_string(v) if wire == 2 else None
    raise _WireError(f"unknown schema type {kind}")


def _int_or_string(raw: bytes) -> int | str:
    """intstr.IntOrString: {type (0 int, 1 string), intVal, strVal}."""
    t = _message(raw, {1: F("type", "int"), 2: F("intVal", "int"), 3: F("strVal", "string")})
    return str(t.get("strVal", "")) if t.get("type") == 1 else int(t.get("intVal", 0))


_KEEP_ZERO = ("int0", "bool0")
"""Optional (pointer) fields: a set zero is kept (`replicas: 0`, `suspend: false`)."""


def _message(buf: bytes, schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, v in _fields(buf):
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
    except (_WireError, UnicodeDecodeError) as err:
        raise errors.bad_request(f"cannot decode protobuf body: {err}") from err


def _envelope(buf: bytes) -> tuple[dict[str, Any], bytes]:
    type_meta: dict[str, Any] = {}
    raw = b""
    for number, wire, v in _fields(buf):
        if wire != 2:
            continue
        if number == 1:
            type_meta = _message(v, {1: F("apiVersion", "string"), 2: F("kind", "string")})
        elif number == 2:
            raw = v
        elif number == 3 and v:
            raise _WireError(f"unsupported contentEncoding {v.decode(errors='replace')!r}")
    return type_meta, raw
