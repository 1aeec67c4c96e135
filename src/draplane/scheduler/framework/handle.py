"""What a plugin gets from the framework: the API client, informer listers, events, the clock,
node holds for pods that wait for a driver, and the pods waiting at Permit.

Listers serve the informer caches: objects are shared and read-only, and the store is updated
before event handlers (and therefore queueing hints) run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from draplane.api import errors
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.scheduler.framework.types import PodInfo


class Lister(Protocol):
    def get(self, name: str, namespace: str = "") -> Obj | None: ...

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]: ...


class EventSource(Protocol):
    """An informer's event handlers (a plugin keeping its own state current from events)."""

    def add_handler(
        self,
        *,
        on_add: Callable[[Obj], None] | None = None,
        on_update: Callable[[Obj, Obj], None] | None = None,
        on_delete: Callable[[Any], None] | None = None,
    ) -> None: ...


class EventRecorder(Protocol):
    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None: ...


class NoEvents:
    """An EventRecorder that drops everything (for handles without one)."""

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        return None


NO_EVENTS = NoEvents()


class NodeHolds(Protocol):
    def hold(self, pod_info: PodInfo, node_name: str) -> None:
        """Count the pod on the node until its next scheduling attempt."""


class NoHolds:
    """NodeHolds that hold nothing (for handles without a scheduler cache)."""

    def hold(self, pod_info: PodInfo, node_name: str) -> None:
        return None


NO_HOLDS = NoHolds()


class WaitingPod(Protocol):
    """A pod that Permit plugins asked to wait (framework.WaitingPod): each pending plugin has
    its own timer, which rejects the pod when it expires."""

    @property
    def pod(self) -> Obj: ...

    def get_pending_plugins(self) -> list[str]:
        """The plugins that have not allowed the pod yet."""
        ...

    def allow(self, plugin_name: str) -> None:
        """`plugin_name` allows the pod; the pod goes on once every pending plugin has."""
        ...

    def reject(self, plugin_name: str, message: str) -> None:
        """Reject the pod (Unschedulable, naming `plugin_name`); every timer is stopped."""
        ...


class WaitingPods(Protocol):
    """The framework's pods waiting at Permit, by pod UID."""

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None: ...

    def get(self, uid: str) -> WaitingPod | None: ...


class NoWaitingPods:
    """WaitingPods that never hold a pod (for handles outside a framework)."""

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None:
        return None

    def get(self, uid: str) -> WaitingPod | None:
        return None


NO_WAITING_PODS = NoWaitingPods()


def lister_get(lister: Lister, rt: ResourceType, *, name: str, namespace: str = "") -> Obj:
    """The cached object; raises the NotFound error a client-go lister would return
    (`resourceclaim.resource.k8s.io "x" not found`: singular resource, as listers word it)."""
    try:
        obj = lister.get(name, namespace)
    except errors.StatusError as err:
        if not errors.is_not_found(err):
            raise
        obj = None
    if obj is None:
        group = f".{rt.group}" if rt.group else ""
        raise errors.StatusError(404, "NotFound", f'{rt.singular}{group} "{name}" not found')
    return obj


@dataclass(frozen=True)
class Handle:
    client: Client
    listers: Mapping[ResourceType, Lister]
    event_recorder: EventRecorder = NO_EVENTS
    clock: Clock = REAL_CLOCK
    holds: NodeHolds = NO_HOLDS
    waiting_pods: WaitingPods = NO_WAITING_PODS
    """Filled in by the framework the plugins run in."""
    event_sources: Mapping[ResourceType, EventSource] = field(default_factory=dict)
    """The informers behind some listers, for plugins that follow their events."""

    def lister(self, rt: ResourceType) -> Lister:
        return self.listers[rt]

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        """Call `callback` for every pod waiting at Permit."""
        self.waiting_pods.iterate(callback)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the waiting pod with this UID ("removed"); False when there is none."""
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True
