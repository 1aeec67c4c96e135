"""/openapi/v2 and /openapi/v3: the served kinds' schemas (from `draplane.api.schema`) and
their REST operations.

- `/openapi/v3` lists one document per group-version (`paths` -> `serverRelativeURL` with a
  content hash); `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>` are OpenAPI 3.0
  documents: `components.schemas` named as upstream (`io.k8s.api.core.v1.Pod`, with
  `x-kubernetes-group-version-kind`) and the paths with their operations; the group-versions
  of established CRDs are listed beside them (`crdopenapi`), with the same operations. Each
  PATCH operation names its kind and takes `fieldValidation`, so kubectl leaves validation to
  the server, and lists the strategic-merge content type, so client-side apply computes
  strategic patches from the schemas; `kubectl explain` reads the schemas.
- `/openapi/v2` as JSON (Accept: application/json) is the Swagger 2.0 document of everything;
  as protobuf (what kubectl asks for) it is the smallest gnostic `Document` without
  definitions: kubectl reads v3 first for explain and validation, and finds no kind in v2 to
  validate against client-side.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

import orjson

from draplane.api import schema, versions
from draplane.api.catalog import Catalog
from draplane.api.kinds import ResourceType
from draplane.api.schema import Schemas
from draplane.api.schema.openapi import Converter
from draplane.apiserver.crdopenapi import crd_openapi_v3, definition_name

# Go's mime parser rejects the `@v1.0` spelling kubectl puts in its Accept header.
CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
PATCH_CONTENT_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_COMMON_SCHEMAS = [_META + "Status", _META + "DeleteOptions"]


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (all lengths here are < 128)."""
    if len(payload) >= 128:
        raise ValueError("field too long for a one-byte length")
    return bytes([(number << 3) | 2, len(payload)]) + payload


def openapi_v2_document(version: str) -> bytes:
    info = _field(1, b"Kubernetes") + _field(2, version.encode())
    return _field(1, b"2.0") + _field(2, info)


def gv_path(group: str, version: str) -> str:
    """`api/v1` or `apis/<group>/<version>`: the key of a document in /openapi/v3."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _param(name: str, where: str, description: str, v3: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "in": where, "description": description}
    if where == "path":
        out["required"] = True
    if v3:
        out["schema"] = {"type": "string", "uniqueItems": True}
    else:
        out["type"], out["uniqueItems"] = "string", True
    return out


def _write_params(v3: bool, *, patch: bool) -> list[dict[str, Any]]:
    out = [
        _param("dryRun", "query", "All: process the request without persisting it.", v3),
        _param("fieldManager", "query", "Name of the actor making the change.", v3),
        _param(
            "fieldValidation",
            "query",
            "What to do with unknown or duplicate fields: Ignore, Warn (default) or Strict.",
            v3,
        ),
    ]
    if patch:
        out.append(_param("force", "query", "Take over conflicting fields (apply only).", v3))
    return out


def _body(conv: Converter, name: str, content_types: tuple[str, ...]) -> dict[str, Any]:
    ref = conv.ref(name)
    if conv.v3:
        return {
            "requestBody": {
                "content": {ct: {"schema": ref} for ct in content_types},
                "required": True,
            }
        }
    return {"parameters": [{"in": "body", "name": "body", "required": True, "schema": ref}]}


def _response(conv: Converter, name: str, code: str = "200") -> dict[str, Any]:
    ref = conv.ref(name)
    if conv.v3:
        content = {ct: {"schema": ref} for ct in ("application/json", "application/yaml")}
        return {code: {"description": "OK", "content": content}}
    return {code: {"description": "OK", "schema": ref}}


def _operation(
    conv: Converter, rt: ResourceType, action: str, kind: str, op_id: str, **extra: Any
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": op_id,
        "description": f"{action} {kind}",
        "tags": [rt.group or "core"],
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": rt.group, "kind": kind, "version": rt.version},
    }
    params = extra.pop("params", [])
    body = extra.pop("body", None)
    if body is not None:
        params = params + body.pop("parameters", [])
        op.update(body)
    if params:
        op["parameters"] = params
    op.update(extra)
    return op


def _paths(
    conv: Converter, rt: ResourceType, struct_name: str, list_name: str = ""
) -> dict[str, Any]:
    """The collection, item and status paths of one resource."""
    base = "/" + gv_path(rt.group, rt.version)
    ns = "/namespaces/{namespace}" if rt.namespaced else ""
    kind = rt.kind
    op_kind = ("Namespaced" if rt.namespaced else "") + kind
    suffix = (rt.group.split(".")[0].capitalize() if rt.group else "Core") + rt.version.title()
    common = [_param("pretty", "query", "Pretty-print the output.", conv.v3)]
    if rt.namespaced:
        common.append(_param("namespace", "path", "Object name and auth scope.", conv.v3))
    write, patch = _write_params(conv.v3, patch=False), _write_params(conv.v3, patch=True)
    out: dict[str, Any] = {}
    collection: dict[str, Any] = {"parameters": list(common)}
    if "list" in rt.verbs:
        collection["get"] = _operation(
            conv,
            rt,
            "list",
            kind,
            f"list{suffix}{op_kind}",
            responses=_response(conv, list_name or struct_name + "List"),
        )
    if "create" in rt.verbs:
        collection["post"] = _operation(
            conv,
            rt,
            "post",
            kind,
            f"create{suffix}{op_kind}",
            params=write,
            body=_body(conv, struct_name, ("*/*",)),
            responses=_response(conv, struct_name, "201"),
        )
    out[f"{base}{ns}/{rt.resource}"] = collection
    if "get" not in rt.verbs:
        return out
    item_params = [*common, _param("name", "path", "Name of the object.", conv.v3)]
    for sub in ("", *(s for s in rt.subresources if s == "status")):
        path = f"{base}{ns}/{rt.resource}/{{name}}" + (f"/{sub}" if sub else "")
        tag = sub.capitalize()
        item: dict[str, Any] = {
            "parameters": item_params,
            "get": _operation(
                conv,
                rt,
                "get",
                kind,
                f"read{suffix}{op_kind}{tag}",
                responses=_response(conv, struct_name),
            ),
            "put": _operation(
                conv,
                rt,
                "put",
                kind,
                f"replace{suffix}{op_kind}{tag}",
                params=write,
                body=_body(conv, struct_name, ("*/*",)),
                responses=_response(conv, struct_name),
            ),
            "patch": _operation(
                conv,
                rt,
                "patch",
                kind,
                f"patch{suffix}{op_kind}{tag}",
                params=patch,
                body=_body(conv, _META + "Patch", PATCH_CONTENT_TYPES),
                responses=_response(conv, struct_name),
            ),
        }
        if not sub:
            item["delete"] = _operation(
                conv,
                rt,
                "delete",
                kind,
                f"delete{suffix}{op_kind}",
                body=_body(conv, _META + "DeleteOptions", ("*/*",)),
                responses=_response(conv, _META + "Status"),
            )
        out[path] = item
    return out


def _served(
    mode: versions.Mode, schemas: Schemas, group: str | None = None, version: str | None = None
) -> list[tuple[ResourceType, str]]:
    out = []
    for rt in mode.served:
        if group is not None and (rt.group, rt.version) != (group, version):
            continue
        struct = schema.for_resource(schemas, rt)
        if struct is not schema.GENERIC:
            out.append((rt, struct.name))
    return out


def _patch_definition(v3: bool) -> dict[str, Any]:
    return {"description": "A patch document in one of the patch content types.", "type": "object"}


@lru_cache(maxsize=64)
def _v3_document(group: str, version: str, mode: versions.Mode, schemas: Schemas) -> bytes | None:
    served = _served(mode, schemas, group, version)
    if not served:
        return None
    conv = Converter(schemas, v3=True)
    paths: dict[str, Any] = {}
    roots = list(_COMMON_SCHEMAS)
    for rt, name in served:
        paths.update(_paths(conv, rt, name))
        roots.append(name)
        if schemas.kind_struct(rt.group, rt.version, rt.kind + "List") is not None:
            roots.append(name + "List")
    definitions = conv.definitions(roots)
    definitions[_META + "Patch"] = _patch_definition(True)
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": mode.git_version},
        "paths": paths,
        "components": {"schemas": dict(sorted(definitions.items()))},
    }
    return orjson.dumps(doc)


def _crd_document(catalog: Catalog, group: str, version: str) -> bytes | None:
    """The document of a custom group-version: the CRDs' kinds (`crd_openapi_v3`) with their
    REST operations and the meta/v1 schemas they reference, as apiextensions-apiserver
    publishes it."""
    doc = crd_openapi_v3(catalog).get(gv_path(group, version))
    if doc is None:
        return None
    conv = Converter(catalog.schemas, v3=True)
    for rt in catalog.custom():
        if (rt.group, rt.version) == (group, version):
            names = (definition_name(rt, rt.kind), definition_name(rt, rt.list_kind))
            doc["paths"].update(_paths(conv, rt, *names))
    schemas = doc["components"]["schemas"]
    schemas.update(conv.definitions([_META + "ObjectMeta", _META + "ListMeta", *_COMMON_SCHEMAS]))
    schemas[_META + "Patch"] = _patch_definition(True)
    doc["components"]["schemas"] = dict(sorted(schemas.items()))
    return orjson.dumps(doc)


def v3_document(group: str, version: str, catalog: Catalog) -> bytes | None:
    """The OpenAPI 3.0 document of one group-version, or None when nothing is served there:
    the built-in kinds' or, for a group-version of established CRDs in `catalog`, theirs."""
    body = _v3_document(group, version, catalog.mode, catalog.schemas)
    if body is None:
        return _crd_document(catalog, group, version)
    return body


def document_hash(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


def v3_index(catalog: Catalog) -> dict[str, Any]:
    """`/openapi/v3`: each served group-version's document with its content hash (so a CRD
    change gives its group-version a new URL)."""
    paths: dict[str, Any] = {}
    for group, group_versions in catalog.group_versions().items():
        for version in group_versions:
            body = v3_document(group, version, catalog)
            if body is not None:
                key = gv_path(group, version)
                paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={document_hash(body)}"}
    return {"paths": paths}


@lru_cache(maxsize=4)
def _v2_json(mode: versions.Mode, schemas: Schemas) -> bytes:
    conv = Converter(schemas, v3=False)
    paths: dict[str, Any] = {}
    roots = list(_COMMON_SCHEMAS)
    for rt, name in _served(mode, schemas):
        paths.update(_paths(conv, rt, name))
        roots.append(name)
        if schemas.kind_struct(rt.group, rt.version, rt.kind + "List") is not None:
            roots.append(name + "List")
    definitions = conv.definitions(roots)
    definitions[_META + "Patch"] = _patch_definition(False)
    doc = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": mode.git_version},
        "paths": paths,
        "definitions": dict(sorted(definitions.items())),
    }
    return orjson.dumps(doc)


def v2_json_document(catalog: Catalog) -> bytes:
    """The Swagger 2.0 document of every kind `catalog` serves built in, as JSON."""
    return _v2_json(catalog.mode, catalog.schemas)
