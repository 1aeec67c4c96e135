"""draplane's own schemas of the served kinds: the Go type tree of each kind, as data.

One description serves every consumer: the decoding step of a write (JSON types, unknown and
duplicate fields under `fieldValidation`), the serialization of fields Go always writes
(`status: {}`, `creationTimestamp: null`), and the OpenAPI v2/v3 documents that `kubectl
explain`, kubectl's validation and client-side apply read.

A struct is registered once under its upstream OpenAPI name, with its fields in Go order:

    from draplane.api.schema import Arr, Map, f, serve, struct
    from draplane.api.schema.meta import metadata_field, type_meta

    WIDGET_SPEC = struct(
        "io.example.v1.WidgetSpec",
        "What a widget should be.",
        f("size", "int32", "How big.", required=True),
        f("parts", Arr("string"), "Its parts.", list_type="set"),
        f("template", "io.k8s.api.core.v1.PodTemplateSpec", "Pods it runs.", emit=True),
    )
    WIDGET = struct(
        "io.example.v1.Widget",
        "A widget.",
        *type_meta(),
        metadata_field(),
        f("spec", WIDGET_SPEC, "Desired state.", emit=True),
    )
    serve("example.io", "v1", "Widget", WIDGET)  # also registers WidgetList

Field types are primitive names (`string`, `int32`, `int64`, `boolean`, `double`, `byte`,
`quantity`, `time`, `microtime`, `intorstring`, `object` for a free-form subtree, `json`),
struct names, `Arr(t)` and `Map(t)`. Field options: `required`, `emit` (serialized even when
empty: non-pointer structs and times, fields without omitempty; `required` implies it for
scalars and structs), `enum`, `merge="key"` (patchStrategy merge with that merge key),
`patch_strategy`, `list_type`, `map_keys`, `map_type`. A module of definitions is imported
below, once; kinds added at run time (CRDs) call `serve` and `unregister_kind`. A served kind
without a registered schema keeps every field (only its metadata is checked).

Where a Go type differs between the served Kubernetes versions, `override(version, name, ...)`
gives the struct other fields in that version (`podclaims`: core/v1 PodResourceClaim and
PodStatus in 1.36) and `extend(version, name, *fields)` adds some (`core136`: the core/v1
fields 1.36 serves beyond 1.28's). Lookups go through a version's `Schemas`
(`schemas_for(mode.name)`; "" is the base, for code outside any mode), which every consumer
is handed explicitly: the registry holds its mode's (`Catalog.schemas`) and passes it to
decoding, serialization, the OpenAPI documents, the patch tables and pod validation;
`Schemas.get` is the `Callable[[str], Struct]` the protobuf codec takes.
"""

from __future__ import annotations

from draplane.api.kinds import ResourceType
from draplane.api.schema import (
    affinity,
    apiextensions,
    apps,
    batch,
    container,
    core,
    core136,
    events,
    meta,
    persistentvolume,
    pod,
    podclaims,
    policy,
    quota,
    rbac,
    replication,
    resource,
    resourcev1,
    resourcev1slices,
    reviews,
    scheduling,
    services,
    storage,
    volumeclaim,
)
from draplane.api.schema.meta import serve
from draplane.api.schema.model import (
    Arr,
    Field,
    Map,
    Schemas,
    Struct,
    f,
    override,
    register_kind,
    schemas_for,
    struct,
    unregister_kind,
)
from draplane.api.schema.walk import Decoded, decode, normalize

__all__ = [
    "GENERIC",
    "Arr",
    "Decoded",
    "Field",
    "Map",
    "Schemas",
    "Struct",
    "decode",
    "f",
    "for_resource",
    "normalize",
    "override",
    "register_kind",
    "schemas_for",
    "serve",
    "struct",
    "unregister_kind",
]

_DEFINITIONS = (
    affinity,
    container,
    core,
    events,
    meta,
    pod,
    podclaims,
    core136,
    rbac,
    resource,
    reviews,
    apiextensions,
    resourcev1,
    resourcev1slices,
)
_WORKLOAD_DEFINITIONS = (volumeclaim, apps, batch, services, scheduling)
_STORAGE_DEFINITIONS = (persistentvolume, storage, replication, policy, quota)

GENERIC = Struct(
    "io.draplane.Object",
    "An object of a kind without a registered schema: any fields.",
    (*meta.type_meta(), meta.metadata_field()),
    preserve=True,
)


def for_resource(schemas: Schemas, rt: ResourceType) -> Struct:
    """The schema of the kind `rt` serves in `schemas` (`GENERIC` when none is registered)."""
    return schemas.kind_struct(rt.group, rt.version, rt.kind) or GENERIC
