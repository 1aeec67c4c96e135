"""Structs as OpenAPI schema objects, v3 (`#/components/schemas/...`) and v2
(`#/definitions/...`), with upstream's vendor extensions (x-kubernetes-group-version-kind,
-list-type, -list-map-keys, -patch-strategy, -patch-merge-key, -map-type,
-preserve-unknown-fields), read from one Kubernetes version's `Schemas`."""

from __future__ import annotations

from typing import Any

from draplane.api.schema.model import (
    PRIMITIVES,
    SPECIAL,
    Arr,
    Field,
    Map,
    Schemas,
    Struct,
    Type,
    is_struct,
)

_SPECIAL_DEFS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "quantity": (
        "A fixed-point number with a suffix (100m, 1Gi, 2e3): a resource amount.",
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
        {"type": "string"},
    ),
    "time": (
        "A time in RFC 3339 form with second precision (2006-01-02T15:04:05Z).",
        {"type": "string", "format": "date-time"},
        {"type": "string", "format": "date-time"},
    ),
    "microtime": (
        "A time in RFC 3339 form with microsecond precision.",
        {"type": "string", "format": "date-time"},
        {"type": "string", "format": "date-time"},
    ),
    "intorstring": (
        "An integer or a string (a port number or name, a percentage).",
        {"oneOf": [{"type": "integer"}, {"type": "string"}], "format": "int-or-string"},
        {"type": "string", "format": "int-or-string"},
    ),
}


class Converter:
    """Converts the structs of `schemas` for one OpenAPI version (v3, else v2)."""

    def __init__(self, schemas: Schemas, *, v3: bool) -> None:
        self.schemas = schemas
        self.v3 = v3
        self.prefix = "#/components/schemas/" if v3 else "#/definitions/"

    def ref(self, name: str) -> dict[str, Any]:
        return {"$ref": self.prefix + name}

    def type_schema(self, t: Type, *, wrap: bool) -> dict[str, Any]:
        if isinstance(t, Arr):
            return {"type": "array", "items": self.type_schema(t.item, wrap=True)}
        if isinstance(t, Map):
            return {"type": "object", "additionalProperties": self.type_schema(t.value, wrap=True)}
        if is_struct(t) or t in SPECIAL:
            target = self.ref(SPECIAL.get(t, t))
            if not self.v3:
                return target
            out: dict[str, Any] = {"allOf": [target]} if wrap else dict(target)
            if is_struct(t) and wrap:
                out["default"] = {}
            return out
        if t == "object":
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        if t == "json":
            return {"x-kubernetes-preserve-unknown-fields": True}
        kind, fmt = PRIMITIVES[t]
        return {"type": kind, "format": fmt} if fmt else {"type": kind}

    def field_schema(self, fld: Field) -> dict[str, Any]:
        t = fld.type
        out = self.type_schema(t, wrap=True)
        if not self.v3 and "$ref" in out:
            return out  # v2 ignores siblings of $ref
        if not self.v3 and isinstance(t, str) and t in SPECIAL:
            return out
        out["description"] = fld.description
        if fld.enum:
            out["enum"] = list(fld.enum)
        if fld.list_type:
            out["x-kubernetes-list-type"] = fld.list_type
        if fld.map_keys:
            out["x-kubernetes-list-map-keys"] = list(fld.map_keys)
        if fld.map_type:
            out["x-kubernetes-map-type"] = fld.map_type
        if fld.merge_key:
            out["x-kubernetes-patch-merge-key"] = fld.merge_key
        if fld.patch_strategy:
            out["x-kubernetes-patch-strategy"] = fld.patch_strategy
        return out

    def struct_schema(self, struct: Struct) -> dict[str, Any]:
        out: dict[str, Any] = {"description": struct.description, "type": "object"}
        if struct.fields:
            out["properties"] = {fld.name: self.field_schema(fld) for fld in struct.fields}
        required = [fld.name for fld in struct.fields if fld.required]
        if required:
            out["required"] = required
        if struct.preserve:
            out["x-kubernetes-preserve-unknown-fields"] = True
        gvks = self.schemas.kinds_of(struct.name)
        if gvks:
            out["x-kubernetes-group-version-kind"] = [
                {"group": g, "kind": k, "version": v} for g, v, k in gvks
            ]
        return out

    def definitions(self, roots: list[str]) -> dict[str, Any]:
        """Every struct reachable from `roots`, and the named scalar types they use."""
        out: dict[str, Any] = {}
        pending = list(roots)
        while pending:
            name = pending.pop()
            if name in out:
                continue
            struct = self.schemas.get(name)
            out[name] = self.struct_schema(struct)
            for fld in struct.fields:
                t = fld.type
                while isinstance(t, Arr | Map):
                    t = t.item if isinstance(t, Arr) else t.value
                if is_struct(t):
                    pending.append(t)
                elif t in _SPECIAL_DEFS:
                    description, v3, v2 = _SPECIAL_DEFS[t]
                    out[SPECIAL[t]] = {"description": description, **(v3 if self.v3 else v2)}
        return dict(sorted(out.items()))
