"""What a plugin gets from the framework: the API client, informer listers, events, the clock,
and node holds for pods that wait for a driver.

Listers serve the informer caches: objects are shared and read-only, and the store is updated
before event handlers (and therefore queueing hints) run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from draplane.api import errors
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.scheduler.framework.types import PodInfo


class Lister(Protocol):
    def get(self, name: str, namespace: str = "") -> Obj | None: ...

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]: ...


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

    def lister(self, rt: ResourceType) -> Lister:
        return self.listers[rt]
