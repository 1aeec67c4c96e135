"""TaintToleration: NoSchedule and NoExecute taints keep pods that do not tolerate them away."""

from __future__ import annotations

from draplane.api.meta import Obj
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

_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


class TaintToleration:
    name = names.TAINT_TOLERATION

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(GVK.NODE, ActionType.ADD | ActionType.UPDATE))]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        if not node_info.taints:
            return SUCCESS
        tolerations: list[Obj] = pod_info.spec.get("tolerations") or []
        for taint in node_info.taints:
            if taint.get("effect") in _FILTERED_EFFECTS and not tolerated(tolerations, taint):
                return Status.unresolvable(
                    f"node(s) had untolerated taint {{{taint.get('key')}: "
                    f"{taint.get('value') or ''}}}"
                )
        return SUCCESS


def new(args: PluginArgs, handle: Handle) -> TaintToleration:
    return TaintToleration()
