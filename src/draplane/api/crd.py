"""Custom resources as served kinds: the `ResourceType` of each served version of an
apiextensions.k8s.io/v1 CustomResourceDefinition, with what serving it needs (`CustomKind`:
the structural schema, the status and scale subresources, the printer columns).

Both sides use it: the API server's catalog (`draplane.api.catalog`) to route, store and
validate custom resources, and clients (informers, the namespace controller, drivers) to name a
custom resource by group, version and resource from the CRD they read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from draplane.api.kinds import ALL_VERBS, ResourceType
from draplane.api.meta import Obj

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


@dataclass(frozen=True)
class PrinterColumn:
    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True)
class ScaleSubresource:
    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str = ""


@dataclass(frozen=True)
class CustomKind:
    """What a custom resource's version serves beyond its `ResourceType`."""

    crd_name: str
    schema: Any
    """The version's `openAPIV3Schema` (None: no schema, everything preserved)."""
    status: bool
    scale: ScaleSubresource | None
    columns: tuple[PrinterColumn, ...]
    storage_version: str
    versions: tuple[str, ...]
    """The served versions, storage version conversion is `None` (apiVersion rewritten)."""
    has_defaults: bool = False
    """The schema sets a `default` somewhere (objects are defaulted as they are read, too)."""
    terminating: bool = False
    """The CRD is being deleted: its resources are still read and deleted, not created."""
    has_rules: bool = False
    """The schema has `x-kubernetes-validations` somewhere (CEL rules run on writes)."""


def _spec(crd: Obj) -> Obj:
    spec = crd.get("spec")
    return spec if isinstance(spec, dict) else {}


def condition(crd: Obj, kind: str) -> Obj | None:
    for c in (crd.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def is_established(crd: Obj) -> bool:
    c = condition(crd, "Established")
    return c is not None and c.get("status") == "True"


def has_defaults(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "default" in schema:
        return True
    children = [*(schema.get("properties") or {}).values()]
    children += [schema.get("items"), schema.get("additionalProperties")]
    return any(has_defaults(c) for c in children)


def has_rules(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    children = [*(schema.get("properties") or {}).values()]
    children += [schema.get("items"), schema.get("additionalProperties")]
    return any(has_rules(c) for c in children)


def _columns(version: Obj) -> tuple[PrinterColumn, ...]:
    cols = []
    for c in version.get("additionalPrinterColumns") or []:
        cols.append(
            PrinterColumn(
                str(c.get("name", "")),
                str(c.get("type", "string")),
                str(c.get("jsonPath", "")),
                str(c.get("description", "")),
                str(c.get("format", "")),
                int(c.get("priority") or 0),
            )
        )
    return tuple(cols)


def _scale(version: Obj) -> ScaleSubresource | None:
    scale = (version.get("subresources") or {}).get("scale")
    if not isinstance(scale, dict):
        return None
    return ScaleSubresource(
        str(scale.get("specReplicasPath", "")),
        str(scale.get("statusReplicasPath", "")),
        str(scale.get("labelSelectorPath") or ""),
    )


def resource_types(crd: Obj) -> list[ResourceType]:
    """One `ResourceType` per served version of `crd`, in the CRD's order. Names are the
    accepted names when the server set them, else the spec's."""
    spec = _spec(crd)
    status = crd.get("status") if isinstance(crd.get("status"), dict) else {}
    names = (status or {}).get("acceptedNames") or spec.get("names") or {}
    if not names.get("plural") or not names.get("kind"):
        names = spec.get("names") or {}
    group = str(spec.get("group", ""))
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    served = tuple(str(v.get("name")) for v in versions if v.get("served"))
    storage = next((str(v.get("name")) for v in versions if v.get("storage")), "")
    out = []
    for v in versions:
        if not v.get("served"):
            continue
        subresources = v.get("subresources") or {}
        subs = tuple(s for s in ("status", "scale") if isinstance(subresources.get(s), dict))
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        custom = CustomKind(
            crd_name=str((crd.get("metadata") or {}).get("name", "")),
            schema=schema,
            status="status" in subs,
            scale=_scale(v),
            columns=_columns(v),
            storage_version=storage,
            versions=served,
            has_defaults=has_defaults(schema),
            terminating=bool((crd.get("metadata") or {}).get("deletionTimestamp")),
            has_rules=has_rules(schema),
        )
        plural = str(names.get("plural", ""))
        out.append(
            ResourceType(
                group,
                str(v.get("name")),
                plural,
                str(names.get("kind", "")),
                spec.get("scope") == "Namespaced",
                str(names.get("singular") or str(names.get("kind", "")).lower()),
                tuple(names.get("shortNames") or ()),
                subs,
                tuple(names.get("categories") or ()),
                ALL_VERBS,
                custom,
            )
        )
    return out


def resource_type(crd: Obj, version: str = "") -> ResourceType | None:
    """The `ResourceType` of `crd`'s served `version` (the storage version when empty)."""
    types = resource_types(crd)
    for rt in types:
        if rt.version == version or (not version and rt.version == rt.custom.storage_version):
            return rt
    return types[0] if types and not version else None
