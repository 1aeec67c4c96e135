"""NodeResourcesFit: cpu, memory, pod count and extended resources must fit (those DRA serves
excepted, `noderesources_extended`); LeastAllocated scoring.

Args (pluginConfig): `scoringStrategy: {type: LeastAllocated, resources: [{name, weight}]}`
with resources cpu and memory; anything else is rejected.
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors
from draplane.api.errors import FieldError
from draplane.scheduler.framework import (
    GVK,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Handle,
    NodeInfo,
    PluginArgs,
    PodInfo,
    Status,
)
from draplane.scheduler.framework.handle import Lister
from draplane.scheduler.plugins import names, noderesources_extended

MAX_NODE_SCORE = 100


class NodeResourcesFit:
    name = names.NODE_RESOURCES_FIT

    def __init__(
        self, *, cpu_weight: int = 1, memory_weight: int = 1, classes: Lister | None = None
    ) -> None:
        self._cpu_weight = cpu_weight
        self._memory_weight = memory_weight
        self._weights = cpu_weight + memory_weight
        self._classes = classes
        """DeviceClasses (1.36): extended resources DRA serves where the node lacks them."""

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(GVK.POD, ActionType.DELETE)),
            ClusterEventWithHint(
                ClusterEvent(GVK.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)
            ),
        ]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        allocatable = node_info.allocatable
        requested = node_info.requested
        wanted = pod_info.requests
        if (
            requested.pods < allocatable.pods
            and requested.milli_cpu + wanted.milli_cpu <= allocatable.milli_cpu
            and requested.memory + wanted.memory <= allocatable.memory
            and not (
                pod_info.scalar_requests
                and noderesources_extended.insufficient(pod_info, node_info, self._classes)
            )
        ):
            return SUCCESS
        reasons = []
        if requested.pods + 1 > allocatable.pods:
            reasons.append("Too many pods")
        if wanted.milli_cpu and requested.milli_cpu + wanted.milli_cpu > allocatable.milli_cpu:
            reasons.append("Insufficient cpu")
        if wanted.memory and requested.memory + wanted.memory > allocatable.memory:
            reasons.append("Insufficient memory")
        reasons += noderesources_extended.insufficient(pod_info, node_info, self._classes)
        return Status.unschedulable(*reasons) if reasons else SUCCESS

    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> int:
        """LeastAllocated: the share of cpu and memory left free after placing the pod."""
        allocatable = node_info.allocatable
        used = node_info.non_zero_requested
        wanted = pod_info.non_zero
        total = 0
        cpu_weight = self._cpu_weight
        if cpu_weight:
            capacity = allocatable.milli_cpu
            requested = used.milli_cpu + wanted.milli_cpu
            if capacity and requested <= capacity:
                total += (capacity - requested) * MAX_NODE_SCORE // capacity * cpu_weight
        memory_weight = self._memory_weight
        if memory_weight:
            capacity = allocatable.memory
            requested = used.memory + wanted.memory
            if capacity and requested <= capacity:
                total += (capacity - requested) * MAX_NODE_SCORE // capacity * memory_weight
        weights = self._weights
        return total // weights if weights else 0


def new(args: PluginArgs, handle: Handle) -> NodeResourcesFit:
    classes = noderesources_extended.device_classes(handle)
    if not args:
        return NodeResourcesFit(classes=classes)
    strategy = args.get("scoringStrategy") or {}
    unknown = sorted(set(args) - {"scoringStrategy"})
    causes = [errors.forbidden(f"args.{k}", "not supported by draplane") for k in unknown]
    weights = {"cpu": 1, "memory": 1}
    if not isinstance(strategy, dict):
        causes.append(errors.invalid("args.scoringStrategy", strategy, "must be an object"))
    else:
        if strategy.get("type", "LeastAllocated") != "LeastAllocated":
            causes.append(
                errors.not_supported(
                    "args.scoringStrategy.type", strategy.get("type"), ["LeastAllocated"]
                )
            )
        if strategy.get("resources") is not None:
            weights = _resource_weights(strategy["resources"], causes)
    if causes:
        raise errors.invalid_object("NodeResourcesFitArgs", names.NODE_RESOURCES_FIT, causes)
    return NodeResourcesFit(
        cpu_weight=weights["cpu"], memory_weight=weights["memory"], classes=classes
    )


def _resource_weights(resources: Any, causes: list[FieldError]) -> dict[str, int]:
    path = "args.scoringStrategy.resources"
    weights = {"cpu": 0, "memory": 0}
    if not isinstance(resources, list):
        causes.append(errors.invalid(path, resources, "must be a list"))
        return weights
    for i, resource in enumerate(resources):
        if not isinstance(resource, dict):
            causes.append(errors.invalid(f"{path}[{i}]", resource, "must be an object"))
            continue
        name = resource.get("name")
        if name not in weights:
            causes.append(errors.not_supported(f"{path}[{i}].name", name, ["cpu", "memory"]))
            continue
        weight = resource.get("weight") or 1
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            causes.append(
                errors.invalid(f"{path}[{i}].weight", weight, "must be a non-negative integer")
            )
            continue
        weights[name] = weight
    return weights
