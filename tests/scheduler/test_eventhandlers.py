"""Informer event handlers (spec §3.6): which events reach the queue, labelled how, and what
goes to the cache instead. A real queue and cache; the informers are replaced by direct calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from draplane.api.meta import Obj
from draplane.client.informer import DeletedFinalStateUnknown
from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.eventhandlers import EventHandlers, node_update_event
from draplane.scheduler.framework import GVK, ActionType, ClusterEvent
from draplane.scheduler.metrics import SchedulerMetrics
from draplane.scheduler.plugins.queuesort import PrioritySort
from draplane.scheduler.queue import SchedulingQueue
from draplane.testing.builders import (
    from_pod,
    make_claim,
    make_node,
    make_pod,
    make_scheduling_context,
)
from draplane.testing.clock import FakeClock

NODE = make_node("node-0").obj()


def node_with(change: Callable[[Obj], None]) -> Obj:
    node = make_node("node-0").obj()
    change(node)
    return node


@pytest.mark.parametrize(
    ("old", "new", "label"),
    [
        pytest.param(
            node_with(lambda n: n["spec"].update(unschedulable=True)),
            NODE,
            "NodeSpecUnschedulableChange",
            id="uncordoned",
        ),
        pytest.param(
            NODE, node_with(lambda n: n["spec"].update(unschedulable=True)), None, id="cordoned"
        ),
        pytest.param(
            NODE,
            node_with(lambda n: n["status"]["allocatable"].update(cpu="8")),
            "NodeAllocatableChange",
            id="allocatable",
        ),
        pytest.param(
            NODE,
            node_with(lambda n: n["metadata"]["labels"].update(zone="a")),
            "NodeLabelChange",
            id="labels",
        ),
        pytest.param(
            NODE,
            node_with(lambda n: n["spec"].update(taints=[{"key": "k", "effect": "NoSchedule"}])),
            "NodeTaintChange",
            id="taints",
        ),
        pytest.param(
            NODE,
            node_with(
                lambda n: n["status"].update(conditions=[{"type": "Ready", "status": "True"}])
            ),
            "NodeConditionChange",
            id="conditions",
        ),
        pytest.param(
            NODE,
            node_with(
                lambda n: (
                    n["metadata"]["labels"].update(zone="a"),
                    n["status"]["allocatable"].update(cpu="8"),
                )
            ),
            "NodeAllocatableChange",
            id="first-change-in-kube-scheduler-order",
        ),
        pytest.param(
            NODE, node_with(lambda n: n["metadata"].update(resourceVersion="9")), None, id="none"
        ),
    ],
)
def test_node_update_event(old: Obj, new: Obj, label: str | None) -> None:
    event = node_update_event(old, new)
    assert (event.label if event is not None else None) == label


@dataclass
class Harness:
    handlers: EventHandlers
    queue: SchedulingQueue
    cache: SchedulerCache
    metrics: SchedulerMetrics

    def moved_by(self, label: str) -> float:
        return sum(
            self.metrics.registry.get_sample_value(
                "scheduler_queue_incoming_pods_total", {"queue": queue, "event": label}
            )
            or 0.0
            for queue in ("active", "backoff")
        )


async def harness_with_parked_pod(plugin: str) -> Harness:
    """A pod "waiting" rejected by `plugin` sits in the unschedulable pool."""
    metrics = SchedulerMetrics(CollectorRegistry())
    queue = SchedulingQueue(
        less=PrioritySort().less,
        hint_map={
            ClusterEvent(GVK.NODE, ActionType.ALL): [("NodePlugin", None)],
            ClusterEvent(GVK.POD, ActionType.DELETE): [("PodPlugin", None)],
            ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE): [
                ("ClaimPlugin", None)
            ],
            ClusterEvent(GVK.POD_SCHEDULING_CONTEXT, ActionType.ADD | ActionType.UPDATE): [
                ("ContextPlugin", None)
            ],
        },
        clock=FakeClock(),
        metrics=metrics,
    )
    cache = SchedulerCache()
    handlers = EventHandlers(queue, cache, "default-scheduler")
    handlers.on_pod_add(make_pod("waiting").obj())
    qpi = await queue.pop()
    qpi.unschedulable_plugins = {plugin}
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    queue.done(qpi.pod_info.uid)
    assert queue.where("default/waiting") == "unschedulable"
    return Harness(handlers, queue, cache, metrics)


BOUND = make_pod("bound").requests(cpu="1").node("node-0").obj()


async def test_assigned_pod_goes_to_the_cache_and_its_deletion_requeues() -> None:
    h = await harness_with_parked_pod("PodPlugin")
    h.handlers.on_node_add(NODE)
    h.handlers.on_pod_add(BOUND)
    info = h.cache.node_info("node-0")
    assert info is not None
    assert (info.requested.pods, h.queue.where("default/bound")) == (1, None)
    h.handlers.on_pod_delete(DeletedFinalStateUnknown("default/bound", BOUND))
    assert (info.requested.pods, h.moved_by("AssignedPodDelete")) == (0, 1)
    assert h.queue.where("default/waiting") == "backoff"


async def test_pod_that_gets_bound_leaves_the_queue() -> None:
    h = await harness_with_parked_pod("PodPlugin")
    h.handlers.on_node_add(NODE)
    pod = make_pod("p").obj()
    h.handlers.on_pod_add(pod)
    assert h.queue.where("default/p") == "active"
    h.handlers.on_pod_update(pod, from_pod(pod).node("node-0").obj())
    assert h.queue.where("default/p") is None
    assert [p.key for p in h.cache.node_infos()[0].pods.values()] == ["default/p"]


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("p").scheduler_name("other").obj(), id="other-scheduler"),
        pytest.param(make_pod("p").phase("Succeeded").obj(), id="terminated"),
    ],
)
async def test_pods_not_for_this_scheduler_are_not_queued(pod: Obj) -> None:
    h = await harness_with_parked_pod("PodPlugin")
    h.handlers.on_pod_add(pod)
    assert h.queue.where("default/p") is None


async def test_update_of_an_assumed_pod_is_ignored() -> None:
    h = await harness_with_parked_pod("PodPlugin")
    pod = make_pod("p").obj()
    h.handlers.on_pod_add(pod)
    qpi = await h.queue.pop()
    h.cache.assume_pod(qpi.pod_info, "node-0")
    h.handlers.on_pod_update(pod, from_pod(pod).label("x", "y").obj())
    assert h.queue.where("default/p") is None


@dataclass
class CapturingInformer:
    """The informer seam: keeps the handlers so the test can deliver events itself."""

    on_add: Callable[[Any], None] | None = None
    on_update: Callable[[Any, Any], None] | None = None
    on_delete: Callable[[Any], None] | None = None

    def add_handler(
        self,
        *,
        on_add: Callable[[Any], None] | None = None,
        on_update: Callable[[Any, Any], None] | None = None,
        on_delete: Callable[[Any], None] | None = None,
    ) -> None:
        self.on_add, self.on_update, self.on_delete = on_add, on_update, on_delete


CLAIM = make_claim().obj()
PSC = make_scheduling_context(make_pod("waiting").obj()).obj()


@pytest.mark.parametrize(
    ("plugin", "deliver", "label"),
    [
        pytest.param("NodePlugin", lambda i: i["nodes"].on_add(NODE), "NodeAdd", id="node-add"),
        pytest.param(
            "NodePlugin",
            lambda i: i["nodes"].on_update(
                NODE, node_with(lambda n: n["metadata"]["labels"].update(zone="a"))
            ),
            "NodeLabelChange",
            id="node-update",
        ),
        pytest.param("NodePlugin", lambda i: i["nodes"].on_delete(NODE), None, id="node-delete"),
        pytest.param("PodPlugin", lambda i: i["nodes"].on_add(NODE), None, id="not-registered"),
        pytest.param(
            "ClaimPlugin", lambda i: i["claims"].on_add(CLAIM), "ResourceClaimAdd", id="claim-add"
        ),
        pytest.param(
            "ClaimPlugin",
            lambda i: i["claims"].on_update(CLAIM, CLAIM),
            "ResourceClaimUpdate",
            id="claim-update",
        ),
        pytest.param(
            "ContextPlugin",
            lambda i: i["contexts"].on_add(PSC),
            "PodSchedulingContextAdd",
            id="scheduling-context-add",
        ),
        pytest.param(
            "ContextPlugin",
            lambda i: i["contexts"].on_update(PSC, PSC),
            "PodSchedulingContextUpdate",
            id="scheduling-context-update",
        ),
    ],
)
async def test_cluster_events_reach_the_queue(
    plugin: str, deliver: Callable[[dict[str, CapturingInformer]], None], label: str | None
) -> None:
    h = await harness_with_parked_pod(plugin)
    informers = {k: CapturingInformer() for k in ("pods", "nodes", "claims", "contexts")}
    h.handlers.install(**informers)  # type: ignore[arg-type]
    assert (informers["claims"].on_delete, informers["contexts"].on_delete) == (None, None)
    deliver(informers)
    if label is None:
        assert h.queue.where("default/waiting") == "unschedulable"
    else:
        assert (h.moved_by(label), h.queue.where("default/waiting")) == (1, "backoff")
