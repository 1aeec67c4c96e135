"""Protobuf through the API server: a ConfigMap and a Namespace in upstream's encoding, Status
errors, objects, lists, PartialObjectMetadata and watch streams out, the Accept rules (Table
stays JSON, protobuf alone is a 406 for what has no protobuf form, custom resources included,
before anything is written), DeleteOptions in, and malformed bodies as 400s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds, versions
from draplane.api.schema import Schemas, schemas_for
from draplane.apiserver import protobuf_codec, protobuf_serving
from draplane.testing.apistate import wait_for
from draplane.testing.crds import make_crd, make_widget
from draplane.testing.httpserver import HttpServer
from draplane.testing.protowire import envelope, key, ld, md_bytes, read, unwrap, varint, vi

PB = "application/vnd.kubernetes.protobuf"
CM_PATH = "/api/v1/namespaces/default/configmaps"
AS_METADATA = "as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
AS_METADATA_LIST = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


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
    metadata_code, metadata_type, metadata = await send(
        http, "GET", WIDGETS, accept=f"{PB};{AS_METADATA_LIST}"
    )

    assert (refused, orjson.loads(empty)["items"]) == (406, [])
    assert (created, content_type) == (201, "application/json")
    assert watched == 406, watch_type
    # The garbage collector's metadata informers read custom resources in protobuf.
    assert (metadata_code, metadata_type) == (200, PB)
    listing = read(unwrap(metadata)[1])
    assert [read(read(item)[1][0])[1] for item in listing[2]] == [[b"w1"]]
