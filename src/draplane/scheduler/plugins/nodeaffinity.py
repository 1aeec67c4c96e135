"""NodeAffinity: `spec.nodeSelector` and required node affinity (preferred terms: not scored)."""

from __future__ import annotations

from dataclasses import dataclass

from draplane.api.nodeselector import NodeSelector
from draplane.scheduler.framework import (
    GVK,
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Handle,
    NodeInfo,
    PluginArgs,
    PodInfo,
    StateKey,
    Status,
)
from draplane.scheduler.plugins import names

ERR_REASON = "node(s) didn't match Pod's node affinity/selector"


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    node_selector: dict[str, str]
    required: NodeSelector | None


_KEY: StateKey[_PreFilterState] = StateKey("PreFilter" + names.NODE_AFFINITY)


class NodeAffinity:
    name = names.NODE_AFFINITY

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(GVK.NODE, ActionType.ADD | ActionType.UPDATE))]

    def pre_filter(self, state: CycleState, pod_info: PodInfo) -> Status:
        spec = pod_info.spec
        selector: dict[str, str] = spec.get("nodeSelector") or {}
        required_raw = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        if not selector and not required_raw:
            return SKIP
        try:
            required = NodeSelector.parse(required_raw) if required_raw else None
        except ValueError as err:
            return Status.unresolvable(f"invalid node affinity: {err}")
        state.write(_KEY, _PreFilterState(selector, required))
        return SUCCESS

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        data = state.read(_KEY)
        labels = node_info.labels
        for key, value in data.node_selector.items():
            if labels.get(key) != value:
                return Status.unresolvable(ERR_REASON)
        if data.required is not None and not data.required.matches(node_info.node):
            return Status.unresolvable(ERR_REASON)
        return SUCCESS


def new(args: PluginArgs, handle: Handle) -> NodeAffinity:
    return NodeAffinity()
