"""Generated hostile protobuf over the real HTTPS path (test_fuzz.py's style and `hostile`
invariants: no 5xx, no traceback, a rejected write stores nothing): every kind's seed encoded
by the schema codec then cut, flipped or spliced with random fields, for create, update and
DeleteOptions; random fields in a right envelope; and protobuf Accept headers on reads and
watches."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from draplane.api import versions
from draplane.api.kinds import ResourceType
from draplane.api.schema import schemas_for
from draplane.apiserver import protobuf, protobuf_codec
from draplane.testing.hostile import Hostile, create_only, fuzz_settings, seed_objects

pytestmark = pytest.mark.asyncio(loop_scope="module")

PB = "application/vnd.kubernetes.protobuf"
SCHEMAS = schemas_for(versions.CLASSIC.name)
SEEDS = seed_objects()
KINDS = list(SEEDS)
STORED_KINDS = [rt for rt in KINDS if not create_only(rt)]


def _encoded(rt: ResourceType) -> bytes:
    found = SCHEMAS.kind_struct(rt.group, rt.version, rt.kind)
    assert found is not None
    return protobuf_codec.encode(SCHEMAS, found.name, SEEDS[rt])


ENCODED = {rt: _encoded(rt) for rt in KINDS}


def _varint(n: int) -> bytes:
    return protobuf.encode_varint(n)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    head = _varint(number << 3 | wire)
    return head + (_varint(len(payload)) + payload if wire == 2 else payload)


FIELDS = st.recursive(
    st.builds(
        _field,
        st.integers(1, 40),
        st.sampled_from([0, 1, 2, 5, 3]),
        st.binary(max_size=10),
    ),
    lambda inner: st.builds(
        _field, st.integers(1, 40), st.just(2), st.lists(inner, max_size=4).map(b"".join)
    ),
    max_leaves=12,
)
"""Random fields of any wire type (groups too), messages nested in length-delimited ones."""


def _mutate(raw: bytes, data: st.DataObject) -> bytes:
    how = data.draw(st.sampled_from(["cut", "flip", "splice", "soup"]))
    if how == "soup" or not raw:
        return b"".join(data.draw(st.lists(FIELDS, max_size=6)))
    at = data.draw(st.integers(0, len(raw)))
    if how == "cut":
        return raw[:at]
    if how == "flip" and at < len(raw):
        return raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1 :]
    return raw[:at] + data.draw(FIELDS) + raw[at:]


def _path(hostile: Hostile, rt: ResourceType, verb: str) -> tuple[str, str]:
    name = SEEDS[rt]["metadata"]["name"]
    if verb == "create" or create_only(rt):
        return "POST", hostile.path(rt, "")
    if verb == "update":
        return "PUT", hostile.path(rt, name)
    return "DELETE", hostile.path(rt, name) + "?dryRun=All"


@fuzz_settings(short=80)
@given(
    rt=st.sampled_from(KINDS),
    verb=st.sampled_from(["create", "update", "delete"]),
    data=st.data(),
)
async def test_mangled_protobuf_bodies(
    hostile: Hostile, rt: ResourceType, verb: str, data: st.DataObject
) -> None:
    method, path = _path(hostile, rt, verb)
    api_version, kind = rt.api_version, rt.kind
    raw = ENCODED[rt]
    if method == "DELETE":
        kind, raw = "DeleteOptions", b""
    body = protobuf.wrap(api_version, kind, _mutate(raw, data))
    if data.draw(st.booleans()):
        body = _mutate(body, data)
    await hostile.check(
        method, path, body=body, headers={"Content-Type": PB, "Accept": f"{PB}, */*"}
    )


ACCEPTS = st.sampled_from(
    [
        PB,
        f"{PB}, */*",
        f"{PB};stream=watch",
        f"{PB};as=Table;v=v1;g=meta.k8s.io",
        f"{PB};as=Table;v=v1;g=meta.k8s.io, application/json",
        f"{PB};as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
        f"{PB};as=PartialObjectMetadata;v=v1beta1;g=meta.k8s.io, application/json",
        f"{PB};q=0, application/json",
        f"{PB};q=abc",
        "application/json;q=0.1, " + PB,
    ]
)


@fuzz_settings(short=60)
@given(
    rt=st.sampled_from(STORED_KINDS),
    accept=ACCEPTS,
    read=st.sampled_from(["list", "item", "watch", "missing"]),
)
async def test_protobuf_accept_on_reads(
    hostile: Hostile, rt: ResourceType, accept: str, read: str
) -> None:
    name = {"item": SEEDS[rt]["metadata"]["name"], "missing": "does-not-exist"}.get(read, "")
    path = hostile.path(rt, name)
    if read == "watch":
        path += "?watch=1&timeoutSeconds=1&resourceVersion=0"
    response = await hostile.check("GET", path, headers={"Accept": accept})
    assert response.status in (200, 404, 406)


@pytest.mark.parametrize("rt", [pytest.param(rt, id=rt.resource) for rt in STORED_KINDS])
async def test_every_seed_reads_back_in_protobuf_or_json(
    hostile: Hostile, rt: ResourceType
) -> None:
    name = SEEDS[rt]["metadata"]["name"]
    response = await hostile.check("GET", hostile.path(rt, name), headers={"Accept": f"{PB}, */*"})
    assert response.status == 200
