"""The strategy table: one `ResourceStrategy` per served kind."""

from __future__ import annotations

from draplane.api.kinds import ResourceType
from draplane.apiserver.strategies import (
    ResourceStrategy,
    core,
    rbac,
    resource,
    reviews,
    workloads,
)

STRATEGIES: dict[ResourceType, ResourceStrategy] = {
    s.rt: s
    for group in (
        core.STRATEGIES,
        resource.STRATEGIES,
        rbac.STRATEGIES,
        reviews.STRATEGIES,
        workloads.STRATEGIES,
    )
    for s in group
}


def strategy_for(rt: ResourceType) -> ResourceStrategy:
    found = STRATEGIES.get(rt)
    if found is None:
        found = STRATEGIES[rt] = ResourceStrategy(rt)
    return found
