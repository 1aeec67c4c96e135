"""Protobuf bytes for tests, built as upstream's generated code writes them (varints, keys,
length-delimited fields, the `k8s\\0` envelope, a gogo-protobuf ObjectMeta), and a reader of
them independent of draplane's codec (`read`, `unwrap`)."""

from __future__ import annotations

from typing import Any


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def ld(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload


def vi(number: int, value: int) -> bytes:
    return key(number, 0) + varint(value)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = ld(1, api_version.encode()) + ld(2, kind.encode())
    return b"k8s\x00" + ld(1, type_meta) + ld(2, raw) + ld(3, b"") + ld(4, b"")


def read(buf: bytes) -> dict[int, list[Any]]:
    """Field number -> values (ints for varints, bytes otherwise) of a message of varint and
    length-delimited fields; an assertion fails on any other wire type."""
    out: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(buf):
        tag, pos = _read_varint(buf, pos)
        value: Any
        if tag & 7 == 0:
            value, pos = _read_varint(buf, pos)
        else:
            assert tag & 7 == 2, tag
            size, pos = _read_varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        out.setdefault(tag >> 3, []).append(value)
    return out


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def unwrap(body: bytes) -> tuple[tuple[bytes, bytes], bytes]:
    assert body[:4] == b"k8s\x00", body[:20]
    unknown = read(body[4:])
    type_meta = read(unknown[1][0])
    return (type_meta[1][0], type_meta[2][0]), unknown[2][0]


def md_bytes(name: str, *, labels: dict[str, str] | None = None) -> bytes:
    """ObjectMeta as gogo-protobuf writes it: every string field, a zero creationTimestamp."""
    out = ld(1, name.encode()) + ld(2, b"") + ld(3, b"") + ld(4, b"") + ld(5, b"") + ld(6, b"")
    out += vi(7, 0) + ld(8, b"")
    for k, v in sorted((labels or {}).items()):
        out += ld(11, ld(1, k.encode()) + ld(2, v.encode()))
    return out
