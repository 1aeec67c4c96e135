"""Generated hostile requests over the real HTTPS path, for every served kind and verb.

Wrong JSON types at every field of a valid object (create, update, merge patch, status update,
apply), malformed bodies for every body-taking verb and content type, bad query parameters and
headers. Each request must pass `hostile.check`: no 5xx, no traceback logged, a rejected write
leaves storage unchanged. The default profile is short and derandomized; `DRAPLANE_FUZZ=long`
(`make fuzz`) runs many random examples. The Table printers are also fed arbitrary objects.
"""

from __future__ import annotations

import datetime
import urllib.parse
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given, strategies as st

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.apiserver import tables
from draplane.testing.hostile import Hostile, create_only, fuzz_settings, item_path, seed_objects

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEEDS = seed_objects()
KINDS = list(SEEDS)
STORED_KINDS = [rt for rt in KINDS if not create_only(rt)]
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)


def _json_collections(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)


JSON_VALUES = st.recursive(JSON_SCALARS, _json_collections, max_leaves=8)


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def field_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field and list item under `value`, as key/index paths."""
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in children:
        yield (*prefix, key)
        yield from field_paths(child, (*prefix, key))


def replaced(obj: Obj, path: tuple[Any, ...], value: Any) -> Obj:
    out = deep_copy(obj)
    parent: Any = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return out


def merge_patch_for(obj: Obj, path: tuple[Any, ...], value: Any) -> Obj:
    """The smallest merge patch setting `path` to `value` (lists are replaced whole)."""
    top = path[0]
    if len(path) == 1 or not isinstance(obj[top], dict):
        return {top: replaced(obj, path, value)[top]}
    return {top: merge_patch_for(obj[top], path[1:], value)}


def _wrong_types(rt: ResourceType) -> st.SearchStrategy[tuple[tuple[Any, ...], Any]]:
    obj = SEEDS[rt]
    paths = [p for p in field_paths(obj) if p[:2] != ("metadata", "name")]

    def at(path: tuple[Any, ...]) -> st.SearchStrategy[tuple[tuple[Any, ...], Any]]:
        current: Any = obj
        for key in path:
            current = current[key]
        other = JSON_VALUES.filter(lambda v: _kind_of(v) != _kind_of(current))
        return st.tuples(st.just(path), other)

    return st.sampled_from(paths).flatmap(at)


VERBS = ("create", "update", "merge", "status", "apply")


def _cases() -> Iterator[Any]:
    for rt in KINDS:
        for verb in VERBS:
            if verb == "status" and ("status" not in rt.subresources or rt is kinds.NAMESPACES):
                continue
            if verb != "create" and create_only(rt):
                continue
            yield pytest.param(rt, verb, id=f"{rt.resource}-{verb}")


_NAMES = iter(range(10**9))


@pytest.mark.parametrize(("rt", "verb"), list(_cases()))
@fuzz_settings(short=6)
@given(data=st.data())
async def test_wrong_type_at_any_field(
    hostile: Hostile, rt: ResourceType, verb: str, data: st.DataObject
) -> None:
    path, value = data.draw(_wrong_types(rt))
    name = SEEDS[rt]["metadata"]["name"]
    obj = replaced(SEEDS[rt], path, value)
    json = {"Content-Type": "application/json"}
    if verb == "create":
        if isinstance(obj.get("metadata"), dict):
            obj["metadata"]["name"] = f"{name}-{next(_NAMES)}"
        await hostile.check("POST", hostile.path(rt, ""), body=obj, headers=json)
    elif verb == "update":
        await hostile.check("PUT", hostile.path(rt, name), body=obj, headers=json)
    elif verb == "status":
        await hostile.check("PUT", hostile.path(rt, name, "status"), body=obj, headers=json)
    elif verb == "merge":
        patch = merge_patch_for(SEEDS[rt], path, value)
        headers = {"Content-Type": "application/merge-patch+json"}
        await hostile.check("PATCH", hostile.path(rt, name), body=patch, headers=headers)
    else:
        headers = {"Content-Type": "application/apply-patch+yaml"}
        target = hostile.path(rt, name) + "?fieldManager=fuzz&force=true"
        await hostile.check("PATCH", target, body=obj, headers=headers)


ENDPOINTS = st.sampled_from(KINDS).flatmap(
    lambda rt: st.sampled_from(
        [
            ("POST", item_path(rt, "")),
            ("PUT", item_path(rt, SEEDS[rt]["metadata"]["name"])),
            ("PATCH", item_path(rt, SEEDS[rt]["metadata"]["name"])),
            ("DELETE", item_path(rt, "does-not-exist")),
        ]
        + [
            ("PUT", item_path(rt, SEEDS[rt]["metadata"]["name"], sub))
            for sub in ("status", "finalize")
            if sub in rt.subresources
        ]
        + [
            ("POST", item_path(rt, SEEDS[rt]["metadata"]["name"], sub))
            for sub in ("binding", "token")
            if sub in rt.subresources
        ]
    )
)


BODIES = st.one_of(
    st.binary(max_size=64),
    JSON_VALUES.map(orjson.dumps),
    st.sampled_from(KINDS)
    .map(lambda rt: orjson.dumps(SEEDS[rt]))
    .flatmap(lambda raw: st.integers(0, len(raw)).map(lambda cut: raw[:cut])),
    st.text(alphabet="{}[]:,&*!-? \n\"'abc1", max_size=48).map(str.encode),
)
CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
        "text/plain",
        "",
        *PATCH_TYPES,
    ]
)


@fuzz_settings(short=60)
@given(endpoint=ENDPOINTS, body=BODIES, content_type=CONTENT_TYPES)
async def test_malformed_bodies(
    hostile: Hostile, endpoint: tuple[str, str], body: bytes, content_type: str
) -> None:
    method, path = endpoint
    await hostile.check(method, path, body=body, headers={"Content-Type": content_type})


QUERY_NAMES = (
    "resourceVersion",
    "resourceVersionMatch",
    "limit",
    "continue",
    "labelSelector",
    "fieldSelector",
    "watch",
    "timeoutSeconds",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "pretty",
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "force",
    "gracePeriodSeconds",
    "propagationPolicy",
    "orphanDependents",
    "includeObject",
)
QUERY_VALUES = st.one_of(
    st.text(max_size=10),
    st.sampled_from(
        ["0", "1", "-1", "²", "٣", "1_0", " 1", "true", "All", "Exact", "=", "!", "a in (b"]
    ),
    st.integers().map(str),
)
QUERIES = st.dictionaries(st.sampled_from(QUERY_NAMES), QUERY_VALUES, max_size=3)


@fuzz_settings(short=60)
@given(
    rt=st.sampled_from(STORED_KINDS),
    method=st.sampled_from(["GET", "GET-ITEM", "PATCH", "DELETE", "DELETECOLLECTION"]),
    query=QUERIES,
)
async def test_bad_query_parameters(
    hostile: Hostile, rt: ResourceType, method: str, query: dict[str, str]
) -> None:
    query = dict(query)
    if query.get("watch") or query.get("timeoutSeconds"):
        query["timeoutSeconds"] = "1"  # a watch that starts must end
    if method == "DELETECOLLECTION":
        # Whatever else the selector says, it selects nothing: the seeds stay.
        extra = query.get("labelSelector")
        query["labelSelector"] = "fuzz-nothing=x" + (f",{extra}" if extra else "")
    name = SEEDS[rt]["metadata"]["name"] if method != "DELETE" else "does-not-exist"
    path = hostile.path(rt, name if method in ("GET-ITEM", "PATCH", "DELETE") else "")
    if method == "PATCH":
        body, headers = (
            b'{"metadata":{"labels":{"fuzzed":"yes"}}}',
            {"Content-Type": PATCH_TYPES[1]},
        )
    else:
        body, headers = None, {}
    response = await hostile.send("GET", path)  # the path is valid without the query
    assert response.status == 200 or method == "DELETE"
    target = f"{path}?{urllib.parse.urlencode(query)}" if query else path
    verb = {"GET-ITEM": "GET", "DELETECOLLECTION": "DELETE"}.get(method, method)
    await hostile.check(verb, target, body=body, headers=headers)


HEADER_VALUES = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=24),
    st.sampled_from(
        [
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            "application/json;as=Table;v=v9;g=meta.k8s.io",
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
            "application/json;as=Table",
            "gzip",
            "deflate, br",
            "*/*;q=0.1",
        ]
    ),
)


@fuzz_settings(short=40)
@given(
    rt=st.sampled_from(KINDS),
    accept=HEADER_VALUES,
    encoding=st.none() | HEADER_VALUES,
    content_type=st.none() | HEADER_VALUES,
    write=st.booleans(),
)
async def test_bad_headers(
    hostile: Hostile,
    rt: ResourceType,
    accept: str,
    encoding: str | None,
    content_type: str | None,
    write: bool,
) -> None:
    headers = {"Accept": accept}
    if encoding is not None:
        headers["Content-Encoding"] = encoding
    if content_type is not None:
        headers["Content-Type"] = content_type
    name = SEEDS[rt]["metadata"]["name"]
    if write:
        body = orjson.dumps({"metadata": {"labels": {"fuzzed": "headers"}}})
        await hostile.check("PATCH", hostile.path(rt, name), body=body, headers=headers)
    else:
        await hostile.check("GET", hostile.path(rt, ""), headers=headers)


STORED = st.dictionaries(
    st.sampled_from(
        [
            "metadata",
            "spec",
            "status",
            "count",
            "series",
            "involvedObject",
            "data",
            "driverName",
            "source",
            "lastTimestamp",
            "firstTimestamp",
        ]
    ),
    JSON_VALUES,
    max_size=5,
)


@fuzz_settings(short=150, long=20_000)
@given(rt=st.sampled_from(KINDS), obj=STORED)
async def test_tables_print_any_stored_object(rt: ResourceType, obj: Obj) -> None:
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    table = tables.to_table(rt, [obj], now=now, include_object="Object")
    assert len(table["rows"]) == 1
    assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"])
