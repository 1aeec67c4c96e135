"""One Protocol per extension point; a plugin takes part in a phase by implementing its method.

Every plugin has a `name`. The runtime sorts plugins into one list per extension point once, when
the framework is built, by checking which of these methods a plugin has. Methods on the
per-node hot path (`filter`, `score`) and those that only read caches are synchronous; phases
that write to the API are coroutines. A plugin exception becomes an ERROR status.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from draplane.api.meta import Obj
from draplane.scheduler.framework.cycle_state import CycleState
from draplane.scheduler.framework.handle import Handle
from draplane.scheduler.framework.status import Status
from draplane.scheduler.framework.types import (
    ClusterEventWithHint,
    NodeInfo,
    PodInfo,
    QueuedPodInfo,
)


@runtime_checkable
class Plugin(Protocol):
    @property
    def name(self) -> str: ...


PluginArgs = Obj | None
"""The `args` of the plugin's `pluginConfig` entry, or None."""

PluginFactory = Callable[[PluginArgs, Handle], Plugin]
"""Builds a plugin; raises `StatusError` (Invalid) for args it does not support."""

Registry = dict[str, PluginFactory]
"""Plugin name -> factory. Built explicitly (`new_in_tree_registry()`), never at import time."""


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Obj) -> Status:
        """Called before a pod enters activeQ. Non-success gates the pod: it is parked in the
        unschedulable pool without an attempt, condition or event, until an event's hint for
        this plugin (or the 5-minute flush) lets it try again. Must be cheap: reads caches."""
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether `a` should be popped before `b`. Exactly one per profile."""
        ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Events that may make a pod this plugin rejected schedulable, each with an optional
        queueing hint (None: always QueueAfterBackoff). Called once at startup."""
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod_info: PodInfo) -> Status:
        """Once per attempt, before Filter. Success, Skip (this plugin's Filter is skipped),
        Unschedulable / UnschedulableAndUnresolvable (every node fails) or Error."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        """Whether the pod fits `node_info` (use it, not the cache). Success, Unschedulable,
        UnschedulableAndUnresolvable or Error (aborts the attempt). Called for many nodes per
        attempt: keep it allocation-free and synchronous."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    async def post_filter(
        self, state: CycleState, pod_info: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> Status:
        """Only when no node fits. Success stops the PostFilter loop (the attempt still fails;
        the plugin prepared a later success), Unschedulable continues with the next plugin,
        UnschedulableAndUnresolvable stops, Error aborts."""
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status:
        """With the feasible nodes (only when there are two or more). Success, Skip (this
        plugin's Score is skipped) or Error."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> int:
        """A score in [0, 100] for one feasible node; multiplied by the profile's weight."""
        ...


@runtime_checkable
class ScoreExtensions(Plugin, Protocol):
    def normalize_score(self, state: CycleState, pod_info: PodInfo, scores: dict[str, int]) -> None:
        """Rewrite this plugin's raw scores (node name -> score) into [0, 100] in place."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    async def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        """The pod is assumed on `node_name`. Non-success fails the attempt: Unschedulable /
        UnschedulableAndUnresolvable record this plugin as a rejector (its events requeue the
        pod), Error is retried after backoff. Unreserve of every plugin follows a failure."""
        ...

    async def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        """Undo `reserve`. Must be idempotent; may be called without a prior reserve."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    async def permit(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> tuple[Status, float]:
        """Success, Wait (with a timeout in seconds: the binding cycle waits until another
        component allows or rejects the pod) or a rejection."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        """In the binding cycle, before Bind. Non-success unreserves and fails the attempt."""
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        """Bind the pod. Skip passes to the next binder; the first non-skip result wins."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    async def post_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        """Informational, after a successful bind; errors are only logged."""
        ...
