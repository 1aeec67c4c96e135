"""Every served kind's declaration, collected from the API groups' modules, and the declaration
of a kind (`strategy_for`). Custom resources get theirs from their CustomResourceDefinition."""

from __future__ import annotations

from draplane.api.kinds import ResourceType
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


def strategy_for(rt: ResourceType) -> ResourceStrategy:
    if rt.custom is not None:
        return custom_strategy(rt)
    found = STRATEGIES.get(rt)
    if found is None:
        raise KeyError(f"{rt} has no declaration")
    return found
