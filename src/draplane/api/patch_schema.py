"""Merge metadata per served kind: the `x-kubernetes-patch-strategy`/`-patch-merge-key` and
`x-kubernetes-list-type`/`-list-map-keys` of upstream OpenAPI (Kubernetes 1.28), as a table.

Paths are dotted from the object root with `[]` for "each list item":
`spec.containers[].ports`. A list absent from the table is atomic; a map absent is granular.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from draplane.api import kinds
from draplane.api.kinds import ResourceType

__all__ = ["ATOMIC", "FieldStrategy", "item_path", "schema_for", "strategy_at"]


@dataclass(frozen=True)
class FieldStrategy:
    """How one field merges.

    `patch_strategy` drives strategic merge patch ("merge", "retainKeys", "replace");
    `list_type`/`map_keys` drive server-side apply ("atomic", "set", "map").
    """

    patch_strategy: tuple[str, ...] = ()
    merge_key: str = ""
    list_type: str = "atomic"
    map_keys: tuple[str, ...] = ()

    @property
    def merges(self) -> bool:
        """Strategic merge patch merges this list instead of replacing it."""
        return "merge" in self.patch_strategy

    @property
    def replaces(self) -> bool:
        """`patchStrategy: replace`: a map or list is taken from the patch as a whole."""
        return "replace" in self.patch_strategy


ATOMIC = FieldStrategy()


def _keyed(key: str, *, retain: bool = False, map_keys: tuple[str, ...] = ()) -> FieldStrategy:
    strategy = ("merge", "retainKeys") if retain else ("merge",)
    return FieldStrategy(strategy, key, "map", map_keys or (key,))


def _map_list(*keys: str) -> FieldStrategy:
    """`listType=map` without a patch strategy: atomic for SMP, keyed for server-side apply."""
    return FieldStrategy((), "", "map", keys)


MERGE_SET = FieldStrategy(("merge",), "", "set")
SET = FieldStrategy((), "", "set")

_OBJECT_META = {
    "finalizers": MERGE_SET,
    "ownerReferences": _keyed("uid"),
    "managedFields": FieldStrategy(("replace",)),
}

_CONTAINER = {
    "ports": _keyed("containerPort", map_keys=("containerPort", "protocol")),
    "env": _keyed("name"),
    "volumeMounts": _keyed("mountPath"),
    "volumeDevices": _keyed("devicePath"),
    "resources.claims": _map_list("name"),
}

_POD_SPEC = {
    "volumes": _keyed("name", retain=True),
    "imagePullSecrets": _keyed("name"),
    "hostAliases": _keyed("ip"),
    "resourceClaims": _keyed("name", retain=True),
    "schedulingGates": _keyed("name"),
    "topologySpreadConstraints": _keyed(
        "topologyKey", map_keys=("topologyKey", "whenUnsatisfiable")
    ),
    # tolerations, readinessGates: atomic (absent from the table).
}

_POD_STATUS = {
    "conditions": _keyed("type"),
    "podIPs": _keyed("ip"),
    # 1.28 hostIPs: patchStrategy=merge,patchMergeKey=ip but listType=atomic.
    "hostIPs": FieldStrategy(("merge",), "ip", "atomic"),
    "resourceClaimStatuses": _keyed("name", retain=True),
    # containerStatuses, initContainerStatuses, ephemeralContainerStatuses: atomic.
}


def _prefixed(prefix: str, table: Mapping[str, FieldStrategy]) -> dict[str, FieldStrategy]:
    return {f"{prefix}.{path}": strategy for path, strategy in table.items()}


def _pod_spec(prefix: str) -> dict[str, FieldStrategy]:
    out = _prefixed(prefix, _POD_SPEC)
    for containers in ("containers", "initContainers", "ephemeralContainers"):
        out[f"{prefix}.{containers}"] = _keyed("name")
        out.update(_prefixed(f"{prefix}.{containers}[]", _CONTAINER))
    return out


_COMMON = _prefixed("metadata", _OBJECT_META)

_BY_KEY: dict[str, dict[str, FieldStrategy]] = {
    kinds.PODS.key: {**_COMMON, **_pod_spec("spec"), **_prefixed("status", _POD_STATUS)},
    kinds.NODES.key: {
        **_COMMON,
        "spec.podCIDRs": MERGE_SET,
        # spec.taints, status.images, status.volumesAttached/volumesInUse: atomic.
        "status.conditions": _keyed("type"),
        "status.addresses": _keyed("type"),
    },
    kinds.NAMESPACES.key: {
        **_COMMON,
        # spec.finalizers is atomic (listType=atomic, no patch strategy).
        "status.conditions": _keyed("type"),
    },
    kinds.RESOURCE_CLAIMS.key: {
        **_COMMON,
        # 1.28: listType=map keyed by uid, no patchStrategy -> atomic for SMP (see fidelity).
        "status.reservedFor": _map_list("uid"),
    },
    kinds.RESOURCE_CLAIM_TEMPLATES.key: {**_COMMON, **_prefixed("spec.metadata", _OBJECT_META)},
    kinds.POD_SCHEDULING_CONTEXTS.key: {
        **_COMMON,
        "spec.potentialNodes": SET,
        "status.resourceClaims": _map_list("name"),
        "status.resourceClaims[].unsuitableNodes": SET,
    },
}


def _template(prefix: str) -> dict[str, FieldStrategy]:
    """A PodTemplateSpec at `prefix`: its metadata and pod spec."""
    return {**_prefixed(f"{prefix}.metadata", _OBJECT_META), **_pod_spec(f"{prefix}.spec")}


_WORKLOAD = {**_COMMON, **_template("spec.template"), "status.conditions": _keyed("type")}
_BY_KEY.update(
    {
        kinds.DEPLOYMENTS.key: _WORKLOAD,
        kinds.REPLICA_SETS.key: _WORKLOAD,
        kinds.STATEFUL_SETS.key: {
            **_WORKLOAD,
            **_prefixed("spec.volumeClaimTemplates[].metadata", _OBJECT_META),
        },
        kinds.DAEMON_SETS.key: _WORKLOAD,
        kinds.JOBS.key: {
            **_COMMON,
            **_template("spec.template"),
            "status.conditions": FieldStrategy(("merge",), "type", "atomic"),
        },
        kinds.CRON_JOBS.key: {
            **_COMMON,
            **_prefixed("spec.jobTemplate.metadata", _OBJECT_META),
            **_template("spec.jobTemplate.spec.template"),
        },
    }
)

_EMPTY: Mapping[str, FieldStrategy] = MappingProxyType({})
_SCHEMAS: dict[str, Mapping[str, FieldStrategy]] = {
    rt.key: MappingProxyType(_BY_KEY.get(rt.key, _COMMON)) for rt in kinds.SERVED
}


def schema_for(rt: ResourceType) -> Mapping[str, FieldStrategy]:
    """The merge table of `rt` (ObjectMeta entries only for kinds without special lists)."""
    return _SCHEMAS.get(rt.key, _EMPTY)


def strategy_at(schema: Mapping[str, FieldStrategy], path: str) -> FieldStrategy:
    """The strategy of the field at `path`; `ATOMIC` when the table does not list it."""
    return schema.get(path, ATOMIC)


def item_path(path: str) -> str:
    """The path of the items of the list at `path`."""
    return path + "[]"
