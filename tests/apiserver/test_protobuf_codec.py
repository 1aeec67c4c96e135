"""The protobuf codec (`application/vnd.kubernetes.protobuf`): every wire form round-trips
against bytes built as upstream's generated code writes them; through the API server, a
ConfigMap and a Namespace in upstream's encoding, Status errors, PartialObjectMetadata objects,
lists and watch streams out, DeleteOptions in, and malformed bodies as 400s."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import goduration, kinds, versions
from draplane.api.schema import Arr, Field, Map, Schemas, Struct, schemas_for
from draplane.apiserver import protobuf, protobuf_codec, protobuf_serving
from draplane.testing.apistate import wait_for
from draplane.testing.crds import make_crd, make_widget
from draplane.testing.httpserver import HttpServer

PB = "application/vnd.kubernetes.protobuf"
CM_PATH = "/api/v1/namespaces/default/configmaps"
AS_METADATA = "as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
AS_METADATA_LIST = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


# -- bytes as upstream writes them -------------------------------------------------------------


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
    """Field number -> values (ints for varints, bytes otherwise): the test's own reader."""
    out: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(buf):
        tag, pos = _read_varint(buf, pos)
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


# -- through the API server ------------------------------------------------------------------


def md_bytes(name: str, *, labels: dict[str, str] | None = None) -> bytes:
    """ObjectMeta as gogo-protobuf writes it: every string field, a zero creationTimestamp."""
    out = ld(1, name.encode()) + ld(2, b"") + ld(3, b"") + ld(4, b"") + ld(5, b"") + ld(6, b"")
    out += vi(7, 0) + ld(8, b"")
    for k, v in sorted((labels or {}).items()):
        out += ld(11, ld(1, k.encode()) + ld(2, v.encode()))
    return out


async def send(
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    body: bytes | None = None,
    *,
    content_type: str = PB,
    accept: str = "application/json",
) -> tuple[int, str, bytes]:
    headers = {"Content-Type": content_type, "Accept": accept}
    async with http.request(method, path, data=body, headers=headers) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), await resp.read()


UPSTREAM_BODIES = {
    "configmap": (
        CM_PATH,
        envelope(
            "v1",
            "ConfigMap",
            ld(1, md_bytes("pb-cm", labels={"app": "web"}))
            + ld(2, ld(1, b"a") + ld(2, b"1"))
            + ld(3, ld(1, b"bin") + ld(2, b"\x00\xff")),
        ),
        kinds.CONFIGMAPS,
        {"data": {"a": "1"}, "binaryData": {"bin": "AP8="}},
    ),
    "namespace": (
        "/api/v1/namespaces",
        envelope(
            "v1",
            "Namespace",
            ld(1, md_bytes("pb-ns", labels={"team": "a"})) + ld(2, b"") + ld(3, b""),
        ),
        kinds.NAMESPACES,
        {"spec": {"finalizers": ["kubernetes"]}},
    ),
}


@pytest.mark.parametrize(
    ("path", "body", "rt", "want"), UPSTREAM_BODIES.values(), ids=UPSTREAM_BODIES.keys()
)
async def test_upstream_encoded_bodies_are_created(
    server: HttpServer,
    http: aiohttp.ClientSession,
    path: str,
    body: bytes,
    rt: kinds.ResourceType,
    want: dict[str, Any],
) -> None:
    code, _, created = await send(http, "POST", path, body)

    assert code == 201, created
    name = orjson.loads(created)["metadata"]["name"]
    stored = await server.client().get(rt, name, "default" if rt.namespaced else "")
    assert {k: stored[k] for k in want} == want
    assert len(stored["metadata"]["labels"]) == 1
    assert stored["metadata"]["creationTimestamp"]


async def test_a_status_error_is_protobuf_when_preferred(http: aiohttp.ClientSession) -> None:
    code, content_type, body = await send(http, "GET", CM_PATH + "/missing", accept=f"{PB}, */*")

    assert (code, content_type) == (404, PB)
    type_meta, raw = unwrap(body)
    status = read(raw)
    assert type_meta == (b"v1", b"Status")
    assert (status[2], status[4], status[6]) == ([b"Failure"], [b"NotFound"], [404])
    assert read(status[5][0])[1] == [b"missing"]
    assert b"not found" in status[3][0]
    assert protobuf_codec.decode(server_schemas(), protobuf_serving.META + "Status", raw)[
        "details"
    ] == {"name": "missing", "kind": "configmaps"}


def server_schemas() -> Schemas:
    return schemas_for(versions.CLASSIC.name)


async def _make_configmaps(server: HttpServer, *names: str) -> None:
    client = server.client()
    for name in names:
        await client.create(kinds.CONFIGMAPS, {"metadata": {"name": name}}, "default")


async def test_metadata_objects_and_lists_in_protobuf(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await _make_configmaps(server, "a", "b")
    json_accept = f"application/json;{AS_METADATA}"
    _, _, as_json = await send(http, "GET", CM_PATH + "/a", accept=json_accept)

    code, content_type, body = await send(
        http, "GET", CM_PATH + "/a", accept=f"{PB};{AS_METADATA},{json_accept}"
    )
    list_code, _, list_body = await send(http, "GET", CM_PATH, accept=f"{PB};{AS_METADATA_LIST}")

    assert (code, content_type, list_code) == (200, PB, 200)
    type_meta, raw = unwrap(body)
    assert type_meta == (b"meta.k8s.io/v1", b"PartialObjectMetadata")
    decoded = protobuf_codec.decode(
        server_schemas(), protobuf_serving.META + type_meta[1].decode(), raw
    )
    assert {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", **decoded} == (
        orjson.loads(as_json)
    )
    list_type, list_raw = unwrap(list_body)
    listing = read(list_raw)
    assert list_type == (b"meta.k8s.io/v1", b"PartialObjectMetadataList")
    assert read(listing[1][0])[2][0].isdigit()  # ListMeta.resourceVersion
    assert [read(read(item)[1][0])[1] for item in listing[2]] == [[b"a"], [b"b"]]


@pytest.mark.parametrize(
    ("accept", "kind"),
    [(PB, b"ConfigMap"), (f"{PB};{AS_METADATA}", b"PartialObjectMetadata")],
    ids=["objects", "metadata"],
)
async def test_a_watch_streams_length_delimited_watch_events(
    server: HttpServer, http: aiohttp.ClientSession, accept: str, kind: bytes
) -> None:
    await _make_configmaps(server, "w1", "w2")

    code, content_type, body = await send(
        http, "GET", CM_PATH + "?watch=1&resourceVersion=0&timeoutSeconds=1", accept=accept
    )

    assert (code, content_type) == (200, f"{PB};stream=watch")
    events = []
    while body:
        size = int.from_bytes(body[:4], "big")
        frame, body = body[4 : 4 + size], body[4 + size :]
        event = read(frame)  # the frame itself has no envelope (upstream's raw serializer)
        type_meta, raw = unwrap(read(event[2][0])[1][0])
        events.append((event[1][0], type_meta[1], read(read(raw)[1][0])[1][0]))
    assert events == [(b"ADDED", kind, b"w1"), (b"ADDED", kind, b"w2")]


async def test_objects_and_lists_in_protobuf_equal_their_json(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    client = server.client()
    await client.create(
        kinds.CONFIGMAPS,
        {"metadata": {"name": "full", "labels": {"a": "b"}}, "data": {"k": "v"}, "immutable": True},
        "default",
    )
    schemas = server_schemas()

    _, _, item = await send(http, "GET", CM_PATH + "/full", accept=f"{PB}, */*")
    _, _, listing = await send(http, "GET", CM_PATH, accept=f"{PB}, */*")

    item_type, item_raw = unwrap(item)
    assert item_type == (b"v1", b"ConfigMap")
    decoded = protobuf_codec.decode(schemas, "io.k8s.api.core.v1.ConfigMap", item_raw)
    as_json = await client.get(kinds.CONFIGMAPS, "full", "default")
    assert {"apiVersion": "v1", "kind": "ConfigMap", **decoded} == as_json
    list_type, list_raw = unwrap(listing)
    assert list_type == (b"v1", b"ConfigMapList")
    items = protobuf_codec.decode(schemas, "io.k8s.api.core.v1.ConfigMapList", list_raw)["items"]
    assert [i["metadata"]["name"] for i in items] == ["full"]


@dataclass(frozen=True)
class AcceptCase:
    accept: str
    code: int
    content_type: str
    query: str = ""


TABLE_PB = f"{PB};as=Table;g=meta.k8s.io;v=v1"
NEGOTIATION_CASES = {
    "table-is-json": AcceptCase(
        f"{TABLE_PB},application/json;as=Table;g=meta.k8s.io;v=v1", 200, "application/json"
    ),
    "protobuf-only-table-is-406": AcceptCase(TABLE_PB, 406, "application/json"),
    "protobuf-only-table-watch-is-406": AcceptCase(
        TABLE_PB, 406, "application/json", "?watch=1&timeoutSeconds=1"
    ),
    "json-preferred": AcceptCase(
        f"application/json,{PB};{AS_METADATA_LIST}", 200, "application/json"
    ),
    "quality-orders": AcceptCase(f"application/json;q=0.5,{PB};{AS_METADATA_LIST}", 200, PB),
}


@pytest.mark.parametrize("case", NEGOTIATION_CASES.values(), ids=NEGOTIATION_CASES.keys())
async def test_accept_chooses_the_encoding(http: aiohttp.ClientSession, case: AcceptCase) -> None:
    code, content_type, body = await send(http, "GET", CM_PATH + case.query, accept=case.accept)

    assert (code, content_type) == (case.code, case.content_type), body[:200]


def delete_options(api_version: str, raw: bytes) -> bytes:
    return envelope(api_version, "DeleteOptions", raw)


@pytest.mark.parametrize("api_version", ["v1", "meta.k8s.io/v1", "apps/v1"])
async def test_delete_options_in_protobuf(
    server: HttpServer, http: aiohttp.ClientSession, api_version: str
) -> None:
    await _make_configmaps(server, "doomed")
    client = server.client()

    wrong_uid = delete_options(api_version, ld(2, ld(1, b"not-the-uid")))
    conflict, _, _ = await send(http, "DELETE", CM_PATH + "/doomed", wrong_uid)
    dry_run = delete_options(api_version, ld(5, b"All"))
    dry, _, _ = await send(http, "DELETE", CM_PATH + "/doomed", dry_run)
    still_there = await client.get(kinds.CONFIGMAPS, "doomed", "default")
    now = delete_options(api_version, vi(1, 0) + ld(4, b"Background"))
    deleted, _, _ = await send(http, "DELETE", CM_PATH + "/doomed", now)

    assert (conflict, dry, deleted) == (409, 200, 200)
    assert still_there["metadata"]["name"] == "doomed"
    listed = await client.list(kinds.CONFIGMAPS, "default")
    assert [i["metadata"]["name"] for i in listed["items"]] == []


BAD_BODIES = {
    "no-magic": b"\x0a\x00",
    "truncated-envelope": b"k8s\x00\x0a\xff",
    "envelope-length-past-body": b"k8s\x00" + key(2, 2) + varint(99) + b"x",
    "gzip-content-encoding": b"k8s\x00" + ld(2, b"") + ld(3, b"gzip"),
    "envelope-without-kind": b"k8s\x00" + ld(1, ld(1, b"v1")) + ld(2, b""),
    "envelope-type-meta-wrong-wire-type": b"k8s\x00" + vi(1, 5) + ld(2, b""),
    "options-wrong-wire-type": delete_options("v1", ld(1, b"5")),
    "options-truncated": delete_options("v1", key(1, 0) + b"\x80"),
    "options-length-past-body": delete_options("v1", key(4, 2) + varint(40) + b"Orphan"),
    "preconditions-wrong-wire-type": delete_options("v1", ld(2, vi(1, 3))),
    "configmap-data-wrong-wire-type": envelope("v1", "ConfigMap", ld(1, ld(1, b"c")) + vi(2, 1)),
    "configmap-map-entry-truncated": envelope("v1", "ConfigMap", ld(2, key(1, 2) + b"\x09ab")),
    "configmap-deep-fields-v1": envelope(
        "v1",
        "ConfigMap",
        ld(1, ld(1, b"c") + ld(17, ld(7, ld(1, b'{"f:a":' * 200 + b"{}" + b"}" * 200)))),
    ),
    "configmap-fields-v1-not-json": envelope(
        "v1", "ConfigMap", ld(1, ld(1, b"c") + ld(17, ld(7, ld(1, b"{nope"))))
    ),
}


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
async def test_malformed_protobuf_bodies_are_400s(
    server: HttpServer, http: aiohttp.ClientSession, body: bytes
) -> None:
    await _make_configmaps(server, "kept")

    code, _, status = await send(http, "DELETE", CM_PATH + "/kept", body, accept=f"{PB}, */*")
    created, _, _ = await send(http, "POST", CM_PATH, body)

    assert (code, created) == (400, 400), status
    assert (await server.client().get(kinds.CONFIGMAPS, "kept", "default"))["metadata"]["name"]


WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


async def test_custom_resources_are_json_and_protobuf_only_is_406_before_writing(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(kinds.CUSTOM_RESOURCE_DEFINITIONS, make_crd(scope="Namespaced"))
    await wait_for(lambda: bool(server.registry.kinds.custom()), what="CRD served")
    body = orjson.dumps(make_widget("w1"))

    refused, _, _ = await send(
        http, "POST", WIDGETS, body, content_type="application/json", accept=PB
    )
    _, _, empty = await send(http, "GET", WIDGETS)
    created, content_type, _ = await send(
        http, "POST", WIDGETS, body, content_type="application/json", accept=f"{PB}, */*"
    )
    watched, watch_type, _ = await send(
        http, "GET", WIDGETS + "?watch=1&timeoutSeconds=1", accept=PB
    )

    assert (refused, orjson.loads(empty)["items"]) == (406, [])
    assert (created, content_type) == (201, "application/json")
    assert watched == 406, watch_type


def test_a_watch_event_that_cannot_be_encoded_is_an_error_event() -> None:
    schemas = server_schemas()
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 5}}

    frame = protobuf_serving.watch_frame(schemas, "ADDED", bad)

    event = read(frame[4:])
    type_meta, raw = unwrap(read(event[2][0])[1][0])
    assert (int.from_bytes(frame[:4], "big"), event[1]) == (len(frame) - 4, [b"ERROR"])
    assert (type_meta, read(raw)[6]) == ((b"v1", b"Status"), [500])
