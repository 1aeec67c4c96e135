"""Every served kind's declaration, collected from the API groups' modules, and what is derived
from the list: the declaration of a kind (`strategy_for`) and the protobuf schema of a body
(`protobuf_schema`). Custom resources get theirs from their CustomResourceDefinition."""

from __future__ import annotations

from draplane.api.kinds import SUBRESOURCE_KINDS, ResourceType
from draplane.apiserver.protobuf import Schema
from draplane.apiserver.strategies import (
    ResourceStrategy,
    apiextensions,
    core,
    events,
    network,
    policy,
    quota,
    rbac,
    resource,
    resourcev1,
    reviews,
    scheduling,
    storage,
    volumes,
    workloads,
)
from draplane.apiserver.strategies.customresource import custom_strategy

DECLARED: tuple[ResourceStrategy, ...] = (
    *core.STRATEGIES,
    *events.STRATEGIES,
    *resource.STRATEGIES,
    *resourcev1.STRATEGIES,
    *rbac.STRATEGIES,
    *reviews.STRATEGIES,
    *workloads.STRATEGIES,
    *network.STRATEGIES,
    *scheduling.STRATEGIES,
    *storage.STRATEGIES,
    *volumes.STRATEGIES,
    *policy.STRATEGIES,
    *quota.STRATEGIES,
    *apiextensions.STRATEGIES,
)
"""One declaration per served kind and version, by API group."""
STRATEGIES: dict[ResourceType, ResourceStrategy] = {s.rt: s for s in DECLARED}
_PROTOBUF: dict[tuple[str, str], Schema] = {
    **{(s.rt.api_version, s.rt.kind): s.protobuf for s in DECLARED if s.protobuf is not None},
    **{
        (f"{group}/{version}" if group else version, kind): schema
        for s in DECLARED
        for sub, schema in s.subresource_protobuf.items()
        for group, version, kind in [SUBRESOURCE_KINDS[sub]]
    },
}


def strategy_for(rt: ResourceType) -> ResourceStrategy:
    if rt.custom is not None:
        return custom_strategy(rt)
    found = STRATEGIES.get(rt)
    if found is None:
        raise KeyError(f"{rt} has no declaration")
    return found


def protobuf_schema(api_version: str, kind: str) -> Schema | None:
    """The protobuf schema of a body of this kind (a served kind's or a subresource's)."""
    return _PROTOBUF.get((api_version, kind))
