"""NodeUnschedulable: keeps pods off cordoned nodes unless they tolerate the unschedulable taint."""

from __future__ import annotations

from draplane.api.tolerations import tolerated
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
from draplane.scheduler.plugins import names

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class NodeUnschedulable:
    name = names.NODE_UNSCHEDULABLE

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(GVK.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT)
            )
        ]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        if not node_info.unschedulable or tolerated(pod_info.spec.get("tolerations") or [], _TAINT):
            return SUCCESS
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)


def new(args: PluginArgs, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
