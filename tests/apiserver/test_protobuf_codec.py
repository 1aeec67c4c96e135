"""The protobuf codec at the wire: every wire form round-trips against bytes built as
upstream's generated code writes them; Go's decoding rules (packed scalars, dropped zeros,
unknown fields, emitted fields); malformed messages; which structs count as numbered; Go
duration strings; a watch event that cannot be encoded."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import goduration, versions
from draplane.api.schema import Arr, Field, Map, Schemas, Struct, schemas_for
from draplane.apiserver import protobuf, protobuf_codec, protobuf_serving
from draplane.testing.protowire import key, ld, read, unwrap, varint, vi

# -- every wire form, against a struct of the test's own -----------------------------------------

T = "io.draplane.test.v1."
INNER = Struct(
    T + "Inner", "", (Field("name", "string", "", tag=1), Field("n", "int32", "", tag=2))
)
DEEP = Struct(T + "Deep", "", (Field("child", T + "Deep", "", tag=1),))
ALL = Struct(
    T + "All",
    "",
    (
        Field("apiVersion", "string", ""),
        Field("kind", "string", ""),
        Field("s", "string", "", tag=1),
        Field("i32", "int32", "", tag=2),
        Field("i64", "int64", "", tag=3),
        Field("b", "boolean", "", tag=4),
        Field("d", "double", "", tag=5),
        Field("q", "quantity", "", tag=6),
        Field("t", "time", "", tag=7),
        Field("mt", "microtime", "", tag=8),
        Field("ios", "intorstring", "", tag=9),
        Field("raw", "json", "", tag=10, wire="raw"),
        Field("dur", "string", "", tag=11, wire="duration"),
        Field("bytes", "byte", "", tag=12),
        Field("labels", Map("string"), "", tag=13),
        Field("limits", Map("quantity"), "", tag=14),
        Field("ints", Arr("int32"), "", tag=15),
        Field("inner", INNER.name, "", tag=16),
        Field("items", Arr(INNER.name), "", tag=17),
        Field("nested", Arr(Arr("string")), "", tag=18),
        Field("ptr", "int32", "", tag=19, pointer=True),
        Field("hostPath", "string", "", tag=1, embedded=20),
        Field("extra", Map(Arr("string")), "", tag=21),
        Field("deep", DEEP.name, "", tag=23),
    ),
)
SCHEMAS = Schemas(
    "test", -1, {s.name: s for s in (INNER, DEEP, ALL)}, {("test.io", "v1", "All"): ALL}
)


@dataclass(frozen=True)
class WireCase:
    value: dict[str, Any]
    wire: bytes


WIRE_CASES = {
    "string": WireCase({"s": "héllo"}, ld(1, "héllo".encode())),
    "int32": WireCase({"i32": 7}, vi(2, 7)),
    "negative-int32-is-10-bytes": WireCase({"i32": -1}, key(2, 0) + b"\xff" * 9 + b"\x01"),
    "int64": WireCase({"i64": 1 << 40}, vi(3, 1 << 40)),
    "negative-int64": WireCase({"i64": -5}, vi(3, -5)),
    "bool": WireCase({"b": True}, vi(4, 1)),
    "double": WireCase({"d": 1.5}, key(5, 1) + struct.pack("<d", 1.5)),
    "quantity": WireCase({"q": "100m"}, ld(6, ld(1, b"100m"))),
    "time-seconds": WireCase({"t": "2024-01-02T03:04:05Z"}, ld(7, vi(1, 1704164645) + vi(2, 0))),
    "microtime": WireCase(
        {"mt": "2024-01-02T03:04:05.123456Z"}, ld(8, vi(1, 1704164645) + vi(2, 123456000))
    ),
    "intorstring-int": WireCase({"ios": 8080}, ld(9, vi(1, 0) + vi(2, 8080))),
    "intorstring-string": WireCase({"ios": "http"}, ld(9, vi(1, 1) + ld(3, b"http"))),
    "raw-json": WireCase({"raw": {"a": [1, "x"]}}, ld(10, ld(1, b'{"a":[1,"x"]}'))),
    "duration": WireCase({"dur": "1h30m0s"}, ld(11, vi(1, 5400 * 10**9))),
    "duration-ms": WireCase({"dur": "1.5ms"}, ld(11, vi(1, 1_500_000))),
    "bytes": WireCase({"bytes": "AAEC"}, ld(12, b"\x00\x01\x02")),
    "map-sorted": WireCase(
        {"labels": {"b": "2", "a": ""}},
        ld(13, ld(1, b"a") + ld(2, b"")) + ld(13, ld(1, b"b") + ld(2, b"2")),
    ),
    "map-of-quantity": WireCase(
        {"limits": {"cpu": "2"}}, ld(14, ld(1, b"cpu") + ld(2, ld(1, b"2")))
    ),
    "repeated-int32-unpacked": WireCase({"ints": [1, 2]}, vi(15, 1) + vi(15, 2)),
    "message": WireCase({"inner": {"name": "x", "n": 3}}, ld(16, ld(1, b"x") + vi(2, 3))),
    "repeated-message": WireCase(
        {"items": [{"name": "a"}, {"name": "b"}]}, ld(17, ld(1, b"a")) + ld(17, ld(1, b"b"))
    ),
    "list-of-lists": WireCase(
        {"nested": [["a", "b"], []]}, ld(18, ld(1, b"a") + ld(1, b"b")) + ld(18, b"")
    ),
    "pointer-zero-is-kept": WireCase({"ptr": 0}, vi(19, 0)),
    "embedded-struct": WireCase({"hostPath": "/tmp"}, ld(20, ld(1, b"/tmp"))),
    "map-of-lists": WireCase({"extra": {"k": ["v"]}}, ld(21, ld(1, b"k") + ld(2, ld(1, b"v")))),
}


@pytest.mark.parametrize("case", WIRE_CASES.values(), ids=WIRE_CASES.keys())
def test_every_wire_form_round_trips(case: WireCase) -> None:
    assert protobuf_codec.encode(SCHEMAS, ALL.name, case.value) == case.wire
    assert protobuf_codec.decode(SCHEMAS, ALL.name, case.wire) == case.value


DECODE_CASES = {
    "packed-int32": (ld(15, varint(1) + varint(300)), {"ints": [1, 300]}),
    "non-pointer-zeros-dropped": (
        ld(1, b"") + vi(2, 0) + vi(4, 0) + ld(13, b""),
        {"labels": {"": ""}},
    ),
    "unknown-fields-skipped": (vi(99, 5) + ld(98, b"zz") + ld(1, b"x"), {"s": "x"}),
    "empty-time-is-dropped": (ld(7, b""), {}),
    "time-drops-nanos": (ld(7, vi(1, 0) + vi(2, 5)), {"t": "1970-01-01T00:00:00Z"}),
    "struct-present-but-empty-kept": (ld(16, b""), {"inner": {}}),
    "last-scalar-wins": (vi(2, 1) + vi(2, 2), {"i32": 2}),
    "intorstring-fields-of-other-wire-types-ignored": (ld(9, vi(1, 1) + vi(3, 10**9)), {}),
}


@pytest.mark.parametrize(("wire", "want"), DECODE_CASES.values(), ids=DECODE_CASES.keys())
def test_decoding_follows_go(wire: bytes, want: dict[str, Any]) -> None:
    assert protobuf_codec.decode(SCHEMAS, ALL.name, wire) == want


def test_decoding_writes_what_go_always_serializes() -> None:
    emits = Struct(
        T + "Emits",
        "",
        (
            Field("name", "string", "", tag=1, emit=True),
            Field("when", "time", "", tag=2, emit=True),
            Field("spec", INNER.name, "", tag=3, emit=True),
            Field("count", "int32", "", tag=4),
        ),
    )
    schemas = Schemas("test", -3, {s.name: s for s in (INNER, emits)}, {})

    assert protobuf_codec.decode(schemas, emits.name, vi(4, 0)) == {
        "name": "",
        "when": None,
        "spec": {},
    }


def _deep(levels: int) -> bytes:
    data = b""
    for _ in range(levels):
        data = ld(1, data)
    return ld(23, data)


BAD_MESSAGES = {
    "truncated-varint": key(2, 0) + b"\xff",
    "length-past-the-end": key(1, 2) + varint(50) + b"abc",
    "wrong-wire-type": vi(1, 5),
    "wire-type-group": key(1, 3),
    "truncated-fixed64": key(5, 1) + b"\x00\x00",
    "bad-utf8": ld(1, b"\xff\xfe"),
    "bad-raw-json": ld(10, ld(1, b"{nope")),
    "time-out-of-range": ld(7, vi(1, 1 << 60)),
    "deep-nesting": _deep(200),
}


@pytest.mark.parametrize("wire", BAD_MESSAGES.values(), ids=BAD_MESSAGES.keys())
def test_malformed_messages_are_wire_errors(wire: bytes) -> None:
    with pytest.raises(protobuf.WireError):
        protobuf_codec.decode(SCHEMAS, ALL.name, wire)


def test_a_field_without_a_number_makes_the_kind_unnumbered() -> None:
    holder = Struct(
        T + "Holder",
        "",
        (
            Field("apiVersion", "string", ""),
            Field("kind", "string", ""),
            Field("spec", INNER.name, "", tag=1),
            Field("later", "string", ""),
            Field("free", "object", "", tag=2),
            Field("rawOk", "object", "", tag=3, wire="raw"),
            Field("items", Arr(T + "Loose"), "", tag=4),
        ),
    )
    loose = Struct(T + "Loose", "", (Field("x", "string", ""),))
    schemas = Schemas("test", -2, {s.name: s for s in (INNER, holder, loose)}, {})

    assert protobuf_serving.unnumbered(schemas, holder.name) == (
        "later",
        "free (free-form)",
        "items[].x",
    )
    assert protobuf_serving.unnumbered(schemas, INNER.name) == ()


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("0s", 0),
        ("1h0m0s", 3600 * 10**9),
        ("2m3.5s", 123_500_000_000),
        ("-300ms", -300_000_000),
        ("999ns", 999),
        ("1.5µs", 1500),
    ],
)
def test_durations_are_go_strings(text: str, ns: int) -> None:
    assert goduration.parse_duration(text) == ns
    assert goduration.format_duration(ns) == text


def test_a_watch_event_that_cannot_be_encoded_is_an_error_event() -> None:
    schemas = schemas_for(versions.CLASSIC.name)
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 5}}

    frame = protobuf_serving.watch_frame(schemas, "ADDED", bad)

    event = read(frame[4:])
    type_meta, raw = unwrap(read(event[2][0])[1][0])
    assert (int.from_bytes(frame[:4], "big"), event[1]) == (len(frame) - 4, [b"ERROR"])
    assert (type_meta, read(raw)[6]) == ((b"v1", b"Status"), [500])
