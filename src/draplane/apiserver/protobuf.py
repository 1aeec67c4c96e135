"""The Kubernetes protobuf wire: the `k8s\\0` envelope (magic + runtime.Unknown{typeMeta, raw,
contentEncoding, contentType}, `wrap` / `unwrap`), varints and length-delimited fields, and the
well-known messages (Timestamp, IntOrString, wrappers) the schema codec (`protobuf_codec`)
builds on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


# google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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


def _envelope(buf: bytes) -> tuple[dict[str, str], bytes]:
    type_meta: dict[str, str] = {}
    raw = b""
    for number, wire, v in fields(buf):
        if wire != 2:
            continue
        if number == 1:
            for meta_number, meta_wire, meta in fields(v):
                if meta_wire == 2 and meta_number in (1, 2):
                    type_meta["apiVersion" if meta_number == 1 else "kind"] = meta.decode()
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
