"""Informer event handlers: feed the scheduling queue and the cache (as
kubernetes/kubernetes pkg/scheduler/eventhandlers.go).

Unassigned pods of this scheduler go to the queue; assigned pods and nodes go to the cache.
Node, ResourceClaim, PodSchedulingContext and assigned-pod deletions become ClusterEvents that
requeue unschedulable pods through the plugins' hints. Handlers do no API calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.types import Node, NodeStatus, Pod
from draplane.client.informer import Informer
from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.framework.types import GVK, ActionType, ClusterEvent, unwrap
from draplane.scheduler.queue.scheduling_queue import SchedulingQueue

NODE_ADD = ClusterEvent(GVK.NODE, ActionType.ADD, "NodeAdd")
ASSIGNED_POD_DELETE = ClusterEvent(GVK.POD, ActionType.DELETE, "AssignedPodDelete")
CLAIM_ADD = ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.ADD, "ResourceClaimAdd")
CLAIM_UPDATE = ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.UPDATE, "ResourceClaimUpdate")
CLAIM_DELETE = ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.DELETE, "ResourceClaimDelete")
SLICE_ADD = ClusterEvent(GVK.RESOURCE_SLICE, ActionType.ADD, "ResourceSliceAdd")
SLICE_UPDATE = ClusterEvent(GVK.RESOURCE_SLICE, ActionType.UPDATE, "ResourceSliceUpdate")
CLASS_ADD = ClusterEvent(GVK.DEVICE_CLASS, ActionType.ADD, "DeviceClassAdd")
CLASS_UPDATE = ClusterEvent(GVK.DEVICE_CLASS, ActionType.UPDATE, "DeviceClassUpdate")
PSC_ADD = ClusterEvent(GVK.POD_SCHEDULING_CONTEXT, ActionType.ADD, "PodSchedulingContextAdd")
PSC_UPDATE = ClusterEvent(
    GVK.POD_SCHEDULING_CONTEXT, ActionType.UPDATE, "PodSchedulingContextUpdate"
)
_TERMINAL_PHASES = ("Succeeded", "Failed")


def assigned(pod: Pod | Obj) -> bool:
    return bool(meta.node_name(pod))


def terminated(pod: Pod | Obj) -> bool:
    return meta.pod_status(pod).get("phase") in _TERMINAL_PHASES


def node_update_event(old: Node, new: Node) -> ClusterEvent | None:
    """The first changed property, in kube-scheduler's order; None if nothing relevant."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    # Only a node that became schedulable can help (cordoning never does).
    if old_spec.get("unschedulable") and not new_spec.get("unschedulable"):
        return ClusterEvent(GVK.NODE, ActionType.UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")
    if old_status.get("allocatable") != new_status.get("allocatable"):
        return ClusterEvent(GVK.NODE, ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
    if meta.metadata(old).get("labels") != meta.metadata(new).get("labels"):
        return ClusterEvent(GVK.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
    if old_spec.get("taints") != new_spec.get("taints"):
        return ClusterEvent(GVK.NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
    if _conditions(old_status) != _conditions(new_status):
        return ClusterEvent(GVK.NODE, ActionType.UPDATE_NODE_CONDITION, "NodeConditionChange")
    return None


def _conditions(status: NodeStatus) -> list[tuple[str, str]]:
    return [(c.get("type", ""), c.get("status", "")) for c in status.get("conditions") or ()]


def _no_waiting_pod(uid: str) -> bool:
    return False


@dataclass
class EventHandlers:
    queue: SchedulingQueue
    cache: SchedulerCache
    scheduler_name: str
    reject_waiting_pod: Callable[[str], bool] = field(default=_no_waiting_pod)
    """Rejects the pod with this UID if it waits at Permit (the framework's)."""

    def responsible(self, pod: Pod | Obj) -> bool:
        name = meta.pod_spec(pod).get("schedulerName") or "default-scheduler"
        return bool(name == self.scheduler_name)

    def install(
        self,
        *,
        pods: Informer,
        nodes: Informer,
        claims: Informer,
        contexts: Informer | None = None,
        slices: Informer | None = None,
        classes: Informer | None = None,
    ) -> None:
        """Classic mode passes `contexts`; the structured mode passes `slices` and `classes`
        (and gets claim deletions, which free devices)."""
        pods.add_handler(
            on_add=self.on_pod_add, on_update=self.on_pod_update, on_delete=self.on_pod_delete
        )
        nodes.add_handler(
            on_add=self.on_node_add,
            on_update=self.on_node_update,
            on_delete=lambda obj: self.cache.remove_node(unwrap(obj)),
        )
        claims.add_handler(
            on_add=lambda obj: self.queue.move_all_to_active_or_backoff(CLAIM_ADD, None, obj),
            on_update=lambda old, new: self.queue.move_all_to_active_or_backoff(
                CLAIM_UPDATE, old, new
            ),
        )
        if contexts is not None:
            contexts.add_handler(
                on_add=lambda obj: self.queue.move_all_to_active_or_backoff(PSC_ADD, None, obj),
                on_update=lambda old, new: self.queue.move_all_to_active_or_backoff(
                    PSC_UPDATE, old, new
                ),
            )
        if slices is None or classes is None:
            return
        claims.add_handler(
            on_delete=lambda obj: self.queue.move_all_to_active_or_backoff(CLAIM_DELETE, obj, None),
        )
        self._requeue_on(slices, SLICE_ADD, SLICE_UPDATE)
        self._requeue_on(classes, CLASS_ADD, CLASS_UPDATE)

    def _requeue_on(self, informer: Informer, add: ClusterEvent, update: ClusterEvent) -> None:
        informer.add_handler(
            on_add=lambda obj: self.queue.move_all_to_active_or_backoff(add, None, obj),
            on_update=lambda old, new: self.queue.move_all_to_active_or_backoff(update, old, new),
        )

    def on_pod_add(self, pod: Obj) -> None:
        if assigned(pod):
            if not terminated(pod):
                self.cache.add_pod(pod)
        elif self.responsible(pod) and not terminated(pod):
            self.queue.add(pod)

    def on_pod_update(self, old: Obj, new: Obj) -> None:
        if assigned(new):
            if not assigned(old):
                self.queue.delete(new)
            if terminated(new):
                self.cache.remove_pod(new)
                if not terminated(old):
                    self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, new, None)
            else:
                self.cache.update_pod(new)
            return
        if not self.responsible(new) or terminated(new):
            self.queue.delete(new)
            self.cache.release(meta.uid(new))
            return
        uid = meta.uid(new)
        if self.cache.is_assumed(uid):
            return
        self.queue.update(old, new)

    def on_pod_delete(self, obj: Any) -> None:
        pod = unwrap(obj)
        if assigned(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
        else:
            uid = meta.uid(pod)
            self.queue.delete(pod)
            self.cache.release(uid)
            # Its binding cycle then unreserves, forgets the assumed pod and sends the
            # AssignedPodDelete event for the node it occupied.
            self.reject_waiting_pod(uid)

    def on_node_add(self, node: Obj) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def on_node_update(self, old: Obj, new: Obj) -> None:
        self.cache.update_node(new)
        event = node_update_event(cast(Node, old), cast(Node, new))
        if event is not None:
            self.queue.move_all_to_active_or_backoff(event, old, new)
