"""The framework runtime: runs each extension point's plugins in order for one profile.

Built once from a `Profile` and a `Registry`. The Filter hot path is exposed as a list of plain
bound methods (`filters()`), which the scheduling algorithm calls node after node. Plugin
execution time is recorded for one scheduling cycle in ten (`sample`), like kube-scheduler.
The framework owns the pods waiting at Permit; its plugins reach them through their handle.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from draplane.api.meta import Obj
from draplane.scheduler.config import Profile
from draplane.scheduler.framework.cycle_state import CycleState
from draplane.scheduler.framework.handle import Handle, WaitingPod
from draplane.scheduler.framework.interfaces import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    Registry,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from draplane.scheduler.framework.status import SUCCESS, Code, Status
from draplane.scheduler.framework.types import (
    WILDCARD_EVENT,
    ClusterEventWithHint,
    NodeInfo,
    PodInfo,
    PodSelector,
    QueuedPodInfo,
)
from draplane.scheduler.metrics import SchedulerMetrics
from draplane.scheduler.queue.requeue import HintMap, HintSelectors
from draplane.scheduler.runtime.profile import resolve_profile
from draplane.scheduler.runtime.waiting_pods_map import (
    MAX_TIMEOUT_SECONDS,
    WaitingPodsMap,
    WaitingPodState,
)

log = logging.getLogger(__name__)

FilterFn = Callable[[CycleState, PodInfo, NodeInfo], Status]


class Framework:
    def __init__(
        self,
        *,
        profile: Profile,
        registry: Registry,
        handle: Handle,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self.waiting_pods = WaitingPodsMap()
        handle = replace(handle, waiting_pods=self.waiting_pods)
        resolved = resolve_profile(profile=profile, registry=registry, handle=handle)
        self.profile_name = profile.scheduler_name
        self.handle = handle
        self.plugins = resolved.plugins
        self.weights = resolved.weights
        self._metrics = metrics
        points = resolved.points
        self.queue_sort = cast(QueueSortPlugin, points["queueSort"][0])
        self.pre_enqueue_plugins = cast(list[PreEnqueuePlugin], points["preEnqueue"])
        self.pre_filter_plugins = cast(list[PreFilterPlugin], points["preFilter"])
        self.filter_plugins = cast(list[FilterPlugin], points["filter"])
        self.post_filter_plugins = cast(list[PostFilterPlugin], points["postFilter"])
        self.pre_score_plugins = cast(list[PreScorePlugin], points["preScore"])
        self.score_plugins = cast(list[ScorePlugin], points["score"])
        # Protocol isinstance checks are slow; Score runs for every pod.
        self._normalizers = {
            p.name: p for p in self.score_plugins if isinstance(p, ScoreExtensions)
        }
        self.reserve_plugins = cast(list[ReservePlugin], points["reserve"])
        self.permit_plugins = cast(list[PermitPlugin], points["permit"])
        self.pre_bind_plugins = cast(list[PreBindPlugin], points["preBind"])
        self.bind_plugins = cast(list[BindPlugin], points["bind"])
        self.post_bind_plugins = cast(list[PostBindPlugin], points["postBind"])
        self.sample = False
        """Record plugin execution time in the current cycle."""

    # -- queue-facing --------------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    def _registered_events(self) -> list[tuple[str, ClusterEventWithHint]]:
        """(plugin, registration) of every plugin that can reject a pod; a plugin without
        EventsToRegister is requeued by every event (the wildcard)."""
        rejecting = {
            p.name: p
            for plugins in (
                self.pre_enqueue_plugins,
                self.pre_filter_plugins,
                self.filter_plugins,
                self.reserve_plugins,
                self.permit_plugins,
            )
            for p in plugins
        }
        registered: list[tuple[str, ClusterEventWithHint]] = []
        for name, plugin in rejecting.items():
            if isinstance(plugin, EnqueueExtensions):
                registered.extend((name, entry) for entry in plugin.events_to_register())
            else:
                registered.append((name, ClusterEventWithHint(WILDCARD_EVENT)))
        return registered

    def hint_map(self) -> HintMap:
        """Registered events of every plugin that can reject a pod, with their hints."""
        hints: HintMap = {}
        for name, entry in self._registered_events():
            hints.setdefault(entry.event, []).append((name, entry.queueing_hint_fn))
        return hints

    def hint_selectors(self) -> HintSelectors:
        """Per event resource, the PodSelectors of its hints: only for resources whose every
        registered hint has one, and none at all when some plugin listens to every event."""
        by_resource: dict[str, list[PodSelector | None]] = {}
        for _, entry in self._registered_events():
            if entry.event.is_wildcard:
                return {}
            selector = entry.pod_selector if entry.queueing_hint_fn is not None else None
            by_resource.setdefault(entry.event.resource, []).append(selector)
        return {
            resource: [s for s in selectors if s is not None]
            for resource, selectors in by_resource.items()
            if all(s is not None for s in selectors)
        }

    def run_pre_enqueue_plugins(self, pod: Obj) -> Status:
        for plugin in self.pre_enqueue_plugins:
            status = self._guard(plugin, "PreEnqueue", plugin.pre_enqueue, pod)
            if not status.is_success:
                return status.with_plugin(plugin.name)
        return SUCCESS

    # -- scheduling cycle ----------------------------------------------------------------------

    def run_pre_filter_plugins(self, state: CycleState, pod_info: PodInfo) -> Status:
        for plugin in self.pre_filter_plugins:
            status = self._guard(plugin, "PreFilter", plugin.pre_filter, state, pod_info)
            if status.is_skip:
                state.skip_filter_plugins.add(plugin.name)
            elif status.is_rejected:
                return status.with_plugin(plugin.name)
            elif not status.is_success:
                return Status.error(
                    f'running PreFilter plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
        return SUCCESS

    def filters(self, state: CycleState) -> list[tuple[str, FilterFn]]:
        """(plugin name, filter method) for this attempt, skipped plugins left out."""
        skip = state.skip_filter_plugins
        return [(p.name, p.filter) for p in self.filter_plugins if p.name not in skip]

    async def run_post_filter_plugins(
        self, state: CycleState, pod_info: PodInfo, statuses: Mapping[str, Status]
    ) -> Status:
        reasons: list[str] = []
        rejector = ""
        for plugin in self.post_filter_plugins:
            status = await self._guard_async(
                plugin, "PostFilter", plugin.post_filter, state, pod_info, statuses
            )
            if status.is_success:
                return status.with_plugin(plugin.name)
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return status.with_plugin(plugin.name)
            if status.code is not Code.UNSCHEDULABLE:
                return status.with_plugin(plugin.name)
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def run_pre_score_plugins(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> Status:
        for plugin in self.pre_score_plugins:
            status = self._guard(plugin, "PreScore", plugin.pre_score, state, pod_info, nodes)
            if status.is_skip:
                state.skip_score_plugins.add(plugin.name)
            elif not status.is_success:
                return Status.error(
                    f'running PreScore plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
        return SUCCESS

    def run_score_plugins(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> dict[str, int]:
        """Weighted total score per node name, in the order of `nodes`."""
        totals: dict[str, int] | None = None
        skip = state.skip_score_plugins
        for plugin in self.score_plugins:
            if plugin.name in skip:
                continue
            score = plugin.score
            scores = {n.name: score(state, pod_info, n) for n in nodes}
            normalizer = self._normalizers.get(plugin.name)
            if normalizer is not None:
                normalizer.normalize_score(state, pod_info, scores)
            weight = self.weights.get(plugin.name, 1)
            if totals is None:
                # The first plugin's scores become the totals: no second pass over the nodes.
                totals = scores if weight == 1 else {k: v * weight for k, v in scores.items()}
            else:
                for node_name, value in scores.items():
                    totals[node_name] += value * weight
        return totals if totals is not None else dict.fromkeys((n.name for n in nodes), 0)

    async def run_reserve_plugins_reserve(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> Status:
        for plugin in self.reserve_plugins:
            status = await self._guard_async(
                plugin, "Reserve", plugin.reserve, state, pod_info, node_name
            )
            if status.is_rejected:
                return status.with_plugin(plugin.name)
            if not status.is_success:
                return Status.error(
                    f'running Reserve plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
        return SUCCESS

    async def run_reserve_plugins_unreserve(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> None:
        for plugin in reversed(self.reserve_plugins):
            try:
                await plugin.unreserve(state, pod_info, node_name)
            except Exception:
                log.exception("Unreserve of plugin %s failed for pod %s", plugin.name, pod_info.key)

    async def run_permit_plugins(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> Status:
        """Success, a rejection, or Wait: then the pod is a waiting pod with one timer per
        plugin that asked it to wait (at most MAX_TIMEOUT_SECONDS each)."""
        plugins_wait_time: dict[str, float] = {}
        for plugin in self.permit_plugins:
            try:
                status, timeout = await plugin.permit(state, pod_info, node_name)
            except Exception as err:
                log.exception("Permit plugin %s failed", plugin.name)
                status, timeout = Status.error(str(err)), 0.0
            if status.code is Code.WAIT:
                plugins_wait_time[plugin.name] = min(timeout, MAX_TIMEOUT_SECONDS)
            elif status.is_rejected:
                return status.with_plugin(plugin.name)
            elif not status.is_success:
                return Status.error(
                    f'running Permit plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
        if plugins_wait_time:
            self.waiting_pods.add(
                WaitingPodState(pod_info.pod, plugins_wait_time, clock=self.handle.clock)
            )
            return Status.wait(
                f'one or more plugins asked to wait and no plugin rejected pod "{pod_info.name}"'
            )
        return SUCCESS

    async def wait_on_permit(self, pod_info: PodInfo) -> Status:
        """Block until the waiting pod is allowed or rejected (at once if it is not waiting)."""
        waiting = self.waiting_pods.state(pod_info.uid)
        if waiting is None:
            return SUCCESS
        try:
            return await waiting.wait()
        finally:
            self.waiting_pods.remove(waiting)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        self.handle.iterate_over_waiting_pods(callback)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.handle.get_waiting_pod(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the pod if it waits at Permit (it was removed); True when it did."""
        return self.handle.reject_waiting_pod(uid)

    def close(self) -> None:
        """Stop the timers of every waiting pod (the scheduler stops)."""
        self.waiting_pods.stop()

    # -- binding cycle -------------------------------------------------------------------------

    async def run_pre_bind_plugins(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> Status:
        for plugin in self.pre_bind_plugins:
            status = await self._guard_async(
                plugin, "PreBind", plugin.pre_bind, state, pod_info, node_name
            )
            if not status.is_success:
                return Status(
                    status.code,
                    (f'running PreBind plugin "{plugin.name}": {status.message}',),
                    plugin.name,
                )
        return SUCCESS

    async def run_bind_plugins(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> Status:
        status = Status.skip()
        for plugin in self.bind_plugins:
            status = await self._guard_async(
                plugin, "Bind", plugin.bind, state, pod_info, node_name
            )
            if not status.is_skip:
                break
        if status.is_skip or status.is_success:
            return SUCCESS if status.is_success else status
        return Status(
            status.code,
            (f'running Bind plugin "{status.plugin}": {status.message}',),
            status.plugin,
        )

    async def run_post_bind_plugins(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> None:
        for plugin in self.post_bind_plugins:
            try:
                await plugin.post_bind(state, pod_info, node_name)
            except Exception:
                log.exception("PostBind of plugin %s failed for pod %s", plugin.name, pod_info.key)

    # -- execution guards ----------------------------------------------------------------------

    def _guard(self, plugin: Plugin, point: str, fn: Callable[..., Status], *args: Any) -> Status:
        start = time.perf_counter() if self.sample else 0.0
        try:
            status = fn(*args)
        except Exception as err:
            log.exception("%s plugin %s failed", point, plugin.name)
            status = Status.error(str(err) or type(err).__name__)
        if self.sample:
            self._observe(plugin.name, point, status, time.perf_counter() - start)
        return status.with_plugin(plugin.name)

    async def _guard_async(
        self, plugin: Plugin, point: str, fn: Callable[..., Any], *args: Any
    ) -> Status:
        start = time.perf_counter() if self.sample else 0.0
        try:
            status: Status = await fn(*args)
        except Exception as err:
            log.exception("%s plugin %s failed", point, plugin.name)
            status = Status.error(str(err) or type(err).__name__)
        if self.sample:
            self._observe(plugin.name, point, status, time.perf_counter() - start)
        return status.with_plugin(plugin.name)

    def _observe(self, plugin: str, point: str, status: Status, seconds: float) -> None:
        if self._metrics is not None:
            code = "Success" if status.is_success else _CODE_NAMES[status.code]
            self._metrics.observe_plugin(
                plugin=plugin, extension_point=point, status=code, seconds=seconds
            )


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
}
