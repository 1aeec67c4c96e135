"""The strategy table: one `ResourceStrategy` per served kind."""

from __future__ import annotations

from draplane.api.kinds import ResourceType
from draplane.apiserver.strategies import (
    ResourceStrategy,
    apiextensions,
    core,
    network,
    rbac,
    resource,
    reviews,
    workloads,
)
from draplane.apiserver.strategies.customresource import custom_strategy

STRATEGIES: dict[ResourceType, ResourceStrategy] = {
    s.rt: s
    for group in (
        core.STRATEGIES,
        resource.STRATEGIES,
        rbac.STRATEGIES,
        reviews.STRATEGIES,
        workloads.STRATEGIES,
        network.STRATEGIES,
        apiextensions.STRATEGIES,
    )
    for s in group
}


def strategy_for(rt: ResourceType) -> ResourceStrategy:
    if rt.custom is not None:
        return custom_strategy(rt)
    found = STRATEGIES.get(rt)
    if found is None:
        found = STRATEGIES[rt] = ResourceStrategy(rt)
    return found
