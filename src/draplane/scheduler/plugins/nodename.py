"""NodeName: a pod with `spec.nodeName` fits only that node."""

from __future__ import annotations

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

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = names.NODE_NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(GVK.NODE, ActionType.ADD))]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        wanted = pod_info.node_name
        if not wanted or wanted == node_info.name:
            return SUCCESS
        return Status.unresolvable(ERR_REASON)


def new(args: PluginArgs, handle: Handle) -> NodeName:
    return NodeName()
