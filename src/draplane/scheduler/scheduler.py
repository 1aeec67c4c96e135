"""The scheduler: informers -> queue -> `schedule_one` (scheduling cycle, then binding cycle).

The scheduling cycle runs one pod at a time; the binding cycle runs as a task so the next pod
can be scheduled meanwhile. Every failure path unreserves, forgets the assumed pod, records
the failure (condition, event, metrics) and requeues the pod.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.api.kinds import NODES, PODS
from draplane.client.events import EventRecorder
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.klog import V2, V4
from draplane.scheduler.algorithm import Diagnosis, FitError, SchedulingAlgorithm, SchedulingFailure
from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.config import SchedulerConfig
from draplane.scheduler.drawiring import dra_wiring
from draplane.scheduler.eventhandlers import ASSIGNED_POD_DELETE, EventHandlers
from draplane.scheduler.failure import (
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    update_pod_condition,
)
from draplane.scheduler.framework.cycle_state import CycleState
from draplane.scheduler.framework.handle import Handle
from draplane.scheduler.framework.interfaces import Registry
from draplane.scheduler.framework.status import Code, Status
from draplane.scheduler.framework.types import PodInfo, QueuedPodInfo
from draplane.scheduler.metrics import SchedulerMetrics
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.registry import new_in_tree_registry
from draplane.scheduler.queue.scheduling_queue import QueueOptions, SchedulingQueue
from draplane.scheduler.runtime.framework import Framework
from draplane.scheduler.runtime.registry import merge

log = logging.getLogger(__name__)

PLUGIN_METRICS_SAMPLE_EVERY = 10
SCHEDULING_SLICE_SECONDS = 0.002
"""How long scheduling cycles may run back to back before the loop yields to the binding
cycles and informers. One cycle per turn of the event loop would tie the scheduler's rate to
the number of other tasks ready in each turn (thousands of simulated nodes renewing Leases)."""


@dataclass
class _Failure:
    status: Status
    fit_error: FitError | None = None


class Scheduler:
    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
        queueing_hints: bool = True,
        pre_enqueue: bool = True,
        config: SchedulerConfig | None = None,
        out_of_tree_registry: Registry | None = None,
        mode: versions.Mode,
    ) -> None:
        """`mode`: the Kubernetes version served, which picks DynamicResources' kinds, event
        handlers and plugin (`drawiring`: the v1alpha2 kinds in 1.28; resource.k8s.io/v1
        claims, ResourceSlices and DeviceClasses in 1.36)."""
        self.config = config or SchedulerConfig()
        profile = self.config.profile
        self._client = client
        self._clock = clock
        self._informers = informers
        self._pods = informers.informer(PODS)
        self.metrics = SchedulerMetrics(metrics, profile=profile.scheduler_name)
        self.recorder = EventRecorder(client, profile.scheduler_name, clock=clock)
        dra = dra_wiring(mode)
        listers = {rt: informers.informer(rt).lister for rt in (PODS, NODES, *dra.kinds)}
        self.cache = SchedulerCache()
        handle = Handle(
            client,
            listers,
            self.recorder,
            clock,
            holds=self.cache,
            event_sources={rt: informers.informer(rt) for rt in dra.kinds},
        )
        registry = new_in_tree_registry()
        registry[names.DYNAMIC_RESOURCES] = dra.plugin
        if out_of_tree_registry:
            merge(registry, out_of_tree_registry)
        self.framework = Framework(
            profile=profile, registry=registry, handle=handle, metrics=self.metrics
        )
        self.queue = self._build_queue(queueing_hints=queueing_hints, pre_enqueue=pre_enqueue)
        self.algorithm = SchedulingAlgorithm(
            framework=self.framework,
            percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
        )
        EventHandlers(
            self.queue,
            self.cache,
            profile.scheduler_name,
            reject_waiting_pod=self.framework.reject_waiting_pod,
        ).install(
            pods=self._pods,
            nodes=informers.informer(NODES),
            **{key: informers.informer(rt) for key, rt in dra.handlers.items()},
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._slice_started = 0.0

    def _build_queue(self, *, queueing_hints: bool, pre_enqueue: bool) -> SchedulingQueue:
        return SchedulingQueue(
            less=self.framework.less,
            hint_map=self.framework.hint_map(),
            selectors=self.framework.hint_selectors(),
            pre_enqueue=self.framework.run_pre_enqueue_plugins if pre_enqueue else None,
            queueing_hints=queueing_hints,
            clock=self._clock,
            metrics=self.metrics,
            options=QueueOptions(
                initial_backoff=self.config.pod_initial_backoff_seconds,
                max_backoff=self.config.pod_max_backoff_seconds,
            ),
        )

    def has_synced(self) -> bool:
        return self._informers.has_synced()

    async def run(self) -> None:
        """Schedule pods until cancelled."""
        await self._informers.start()
        try:
            await self._informers.wait_synced()
            await self._schedule_until_cancelled()
        finally:
            # Informers outliving run() keep re-listing a stopped API server and reopen the
            # closed client's session.
            await self._informers.stop()

    async def _schedule_until_cancelled(self) -> None:
        flushes = asyncio.create_task(self.queue.run(), name="scheduling-queue-flush")
        try:
            while True:
                await self.schedule_one()
        finally:
            self.queue.close()
            flushes.cancel()
            tasks = [flushes, *self._tasks]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.framework.close()
            await self.recorder.flush()

    async def schedule_one(self) -> None:
        """Pop one pod, run its scheduling cycle, and start its binding cycle."""
        # Let binding cycles and informers run between cycles (kube-scheduler runs them in
        # parallel): a cycle that writes nothing never yields to the event loop. Cycles run
        # back to back for up to SCHEDULING_SLICE_SECONDS.
        if time.perf_counter() - self._slice_started >= SCHEDULING_SLICE_SECONDS:
            await asyncio.sleep(0)
            self._slice_started = time.perf_counter()
        qpi = await self.queue.pop()
        pod_info = qpi.pod_info
        # The pod chooses anew, so it no longer counts on the node it waited for.
        self.cache.release(pod_info.uid)
        if (pod_info.pod.get("metadata") or {}).get("deletionTimestamp") or (
            self.cache.is_assumed(pod_info.uid)
        ):
            self.queue.done(pod_info.uid)
            return
        log.log(V4, "Attempting to schedule pod %s", pod_info.key)
        start = time.perf_counter()
        cycle = self.queue.scheduling_cycle
        self.framework.sample = cycle % PLUGIN_METRICS_SAMPLE_EVERY == 0
        state = CycleState()
        outcome = await self._scheduling_cycle(state, qpi)
        if isinstance(outcome, _Failure):
            self._handle_failure(qpi, outcome, cycle=cycle, start=start)
            self.queue.done(pod_info.uid)
            return
        self._spawn(self._binding_cycle(state, qpi, node_name=outcome, cycle=cycle, start=start))

    async def _scheduling_cycle(self, state: CycleState, qpi: QueuedPodInfo) -> str | _Failure:
        pod_info = qpi.pod_info
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            node_name = self.algorithm.schedule_pod(state, pod_info, self.cache.node_infos())
        except FitError as fit:
            self._observe_algorithm(started, cpu)
            status = await self.framework.run_post_filter_plugins(
                state, pod_info, fit.diagnosis.node_to_status
            )
            if not status.is_success:
                fit.diagnosis.post_filter_msg = status.message
            return _Failure(Status(Code.UNSCHEDULABLE, (str(fit),)), fit)
        except SchedulingFailure as err:
            self._observe_algorithm(started, cpu)
            return _Failure(err.status)
        self._observe_algorithm(started, cpu)
        self.cache.assume_pod(pod_info, node_name)
        status = await self.framework.run_reserve_plugins_reserve(state, pod_info, node_name)
        if status.is_success:
            status = await self.framework.run_permit_plugins(state, pod_info, node_name)
            if status.is_success or status.code is Code.WAIT:
                return node_name
        await self.framework.run_reserve_plugins_unreserve(state, pod_info, node_name)
        self.cache.forget_pod(pod_info)
        return _failure_on_node(pod_info, node_name, status)

    def _observe_algorithm(self, started: float, cpu: float) -> None:
        self.metrics.observe_algorithm(
            seconds=time.perf_counter() - started, cpu_seconds=time.thread_time() - cpu
        )

    async def _binding_cycle(
        self, state: CycleState, qpi: QueuedPodInfo, *, node_name: str, cycle: int, start: float
    ) -> None:
        pod_info = qpi.pod_info
        try:
            status = await self.framework.wait_on_permit(pod_info)
            if status.is_success:
                status = await self.framework.run_pre_bind_plugins(state, pod_info, node_name)
            if status.is_success:
                status = await self.framework.run_bind_plugins(state, pod_info, node_name)
            if not status.is_success:
                await self._handle_binding_cycle_error(
                    state, qpi, node_name=node_name, status=status, cycle=cycle, start=start
                )
                return
            self.metrics.observe_attempt("scheduled", time.perf_counter() - start)
            log.log(V2, "Successfully bound pod %s to node %s", pod_info.key, node_name)
            self.recorder.event(
                pod_info.pod,
                "Normal",
                "Scheduled",
                f"Successfully assigned {pod_info.key} to {node_name}",
            )
            await self.framework.run_post_bind_plugins(state, pod_info, node_name)
        finally:
            self.queue.done(pod_info.uid)

    async def _handle_binding_cycle_error(
        self,
        state: CycleState,
        qpi: QueuedPodInfo,
        *,
        node_name: str,
        status: Status,
        cycle: int,
        start: float,
    ) -> None:
        pod_info = qpi.pod_info
        await self.framework.run_reserve_plugins_unreserve(state, pod_info, node_name)
        self.cache.forget_pod(pod_info)
        self._handle_failure(
            qpi, _failure_on_node(pod_info, node_name, status), cycle=cycle, start=start
        )
        # Forgetting the assumed pod frees its node like an assigned-pod delete. Sent after the
        # pod is requeued (and excluding it), so the pod's own event is not replayed for it.
        # A pod held on the node (waiting for its driver) frees nothing.
        uid = pod_info.uid
        if self.cache.is_held(uid):
            return
        self.queue.move_all_to_active_or_backoff(
            ASSIGNED_POD_DELETE,
            pod_info.pod,
            None,
            pre_check=lambda pod: (pod.get("metadata") or {}).get("uid") != uid,
        )

    def _handle_failure(
        self, qpi: QueuedPodInfo, failure: _Failure, *, cycle: int, start: float
    ) -> None:
        status = failure.status
        rejected = status.is_rejected
        reason = REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR
        self.metrics.observe_attempt(
            "unschedulable" if rejected else "error", time.perf_counter() - start
        )
        if failure.fit_error is not None:
            qpi.unschedulable_plugins = set(failure.fit_error.diagnosis.unschedulable_plugins)
        message = status.message
        pod = qpi.pod
        if rejected:
            log.log(V2, "Unable to schedule pod %s; no fit; waiting: %s", qpi.key, message)
        else:
            log.log(V2, "Error scheduling pod %s; retrying: %s", qpi.key, message)
        live = self._pods.lister.get(qpi.pod_info.name, qpi.pod_info.namespace)
        if live is not None and not (live.get("spec") or {}).get("nodeName"):
            if live.get("metadata", {}).get("uid") == qpi.pod_info.uid:
                qpi.pod_info = PodInfo(live)
                pod = live
            self.queue.add_unschedulable_if_not_present(qpi, cycle)
        self.recorder.event(pod, "Warning", "FailedScheduling", message)
        if live is not None:
            self._spawn(
                update_pod_condition(
                    self._client, pod, reason=reason, message=message, clock=self._clock
                )
            )

    def _spawn(self, coro: object) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self) -> None:
        """Wait until every binding cycle and status write started so far is done (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self.recorder.flush()


def _failure_on_node(pod_info: PodInfo, node_name: str, status: Status) -> _Failure:
    """A Reserve/Permit/binding rejection names its plugin, so its events requeue the pod."""
    if not status.is_rejected:
        return _Failure(status)
    diagnosis = Diagnosis(node_to_status={node_name: status}, unschedulable_plugins={status.plugin})
    fit = FitError(pod_info=pod_info, num_all_nodes=1, diagnosis=diagnosis)
    return _Failure(Status(status.code, (str(fit),), status.plugin), fit)
