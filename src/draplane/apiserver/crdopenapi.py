"""The OpenAPI v3 documents apiextensions-apiserver publishes for established CRDs, one per
served group/version (`/openapi/v3/apis/<group>/<version>`): each kind's structural schema
with `apiVersion`, `kind` and `metadata` (a reference to ObjectMeta) added and
`x-kubernetes-group-version-kind`, and its List kind.

`crd_openapi_v3(catalog)` returns them keyed by the document path (`apis/example.com/v1`), for
the /openapi/v3 handler to serve beside the built-in kinds' documents.
"""

from __future__ import annotations

import copy
from typing import Any

from draplane.api.catalog import Catalog
from draplane.api.kinds import ResourceType

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"


def definition_name(rt: ResourceType, kind: str) -> str:
    """`com.example.v1.Widget`: the group reversed, the version, the kind (as upstream)."""
    group = ".".join(reversed(rt.group.split(".")))
    return f"{group}.{rt.version}.{kind}"


def _ref(name: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": f"#/components/schemas/{name}"}]}


def _gvk(rt: ResourceType, kind: str) -> list[dict[str, str]]:
    return [{"group": rt.group, "kind": kind, "version": rt.version}]


def kind_schema(rt: ResourceType) -> dict[str, Any]:
    """The kind's schema as published: the CRD's, with the object's common fields."""
    schema = copy.deepcopy(rt.custom.schema) if isinstance(rt.custom.schema, dict) else {}
    schema.setdefault("type", "object")
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {
        "description": "APIVersion defines the versioned schema of this representation of an "
        "object.",
        "type": "string",
    }
    props["kind"] = {
        "description": "Kind is a string value representing the REST resource this object "
        "represents.",
        "type": "string",
    }
    props["metadata"] = _ref(OBJECT_META)
    schema["x-kubernetes-group-version-kind"] = _gvk(rt, rt.kind)
    return schema


def list_schema(rt: ResourceType) -> dict[str, Any]:
    return {
        "description": f"{rt.list_kind} is a list of {rt.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"type": "array", "items": _ref(definition_name(rt, rt.kind))},
            "kind": {"type": "string"},
            "metadata": _ref(LIST_META),
        },
        "x-kubernetes-group-version-kind": _gvk(rt, rt.list_kind),
    }


def crd_openapi_v3(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """Document path -> OpenAPI v3 document with `components.schemas` of each custom kind."""
    docs: dict[str, dict[str, Any]] = {}
    for rt in catalog.custom():
        path = f"apis/{rt.group}/{rt.version}"
        doc = docs.setdefault(
            path,
            {
                "openapi": "3.0.0",
                "info": {"title": "Kubernetes CRD Swagger", "version": catalog.mode.git_version},
                "paths": {},
                "components": {"schemas": {}},
            },
        )
        schemas = doc["components"]["schemas"]
        schemas[definition_name(rt, rt.kind)] = kind_schema(rt)
        schemas[definition_name(rt, rt.list_kind)] = list_schema(rt)
    return docs
