"""The scheduling algorithm of one attempt: PreFilter, Filter over nodes, PreScore, Score.

`schedule_pod` returns the chosen node, raises `FitError` when no node fits (with the
diagnosis kube-scheduler reports) and `SchedulingFailure` otherwise (an Error, or no nodes).
Filter runs as a plain loop of synchronous calls, starting at a rotating node index and
stopping once enough feasible nodes are found (percentageOfNodesToScore, adaptive by default).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain

from draplane.scheduler.framework.cycle_state import CycleState
from draplane.scheduler.framework.status import Status
from draplane.scheduler.framework.types import NodeInfo, PodInfo
from draplane.scheduler.runtime.framework import Framework

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass
class Diagnosis:
    node_to_status: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    def __init__(self, *, pod_info: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod_info = pod_info
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        """`0/N nodes are available: <count> <reason>, ... .` as kube-scheduler words it."""
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if self.diagnosis.pre_filter_msg:
            msg += f" {self.diagnosis.pre_filter_msg}."
        else:
            histogram: Counter[str] = Counter()
            for status in self.diagnosis.node_to_status.values():
                histogram.update(status.reasons)
            reasons = sorted(f"{count} {reason}" for reason, count in histogram.items())
            msg += f" {', '.join(reasons)}."
        if self.diagnosis.post_filter_msg:
            msg += f" {self.diagnosis.post_filter_msg}."
        return msg


class SchedulingFailure(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_all_nodes
    adaptive = percentage or max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - num_all_nodes // 125)
    return max(num_all_nodes * adaptive // 100, MIN_FEASIBLE_NODES_TO_FIND)


class SchedulingAlgorithm:
    def __init__(self, *, framework: Framework, percentage_of_nodes_to_score: int = 0) -> None:
        self._framework = framework
        self._percentage = percentage_of_nodes_to_score
        self._next_start = 0

    def schedule_pod(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> str:
        if not nodes:
            # Not a FitError: no plugin rejected the pod, so no event of a plugin requeues it.
            raise SchedulingFailure(Status.unresolvable(NO_NODES_AVAILABLE))
        feasible = self._find_nodes_that_fit(state, pod_info, nodes)
        if len(feasible) == 1:
            return feasible[0].name
        status = self._framework.run_pre_score_plugins(state, pod_info, feasible)
        if not status.is_success:
            raise SchedulingFailure(status)
        try:
            scores = self._framework.run_score_plugins(state, pod_info, feasible)
        except Exception as err:
            raise SchedulingFailure(Status.error(f"running Score plugins: {err}")) from err
        return _select_host(scores)

    def _find_nodes_that_fit(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]
    ) -> list[NodeInfo]:
        diagnosis = Diagnosis()
        status = self._framework.run_pre_filter_plugins(state, pod_info)
        if status.is_rejected:
            diagnosis.node_to_status = dict.fromkeys((n.name for n in nodes), status)
            diagnosis.unschedulable_plugins.add(status.plugin)
            diagnosis.pre_filter_msg = status.message
            raise FitError(pod_info=pod_info, num_all_nodes=len(nodes), diagnosis=diagnosis)
        if not status.is_success:
            raise SchedulingFailure(status)
        feasible = self._filter(state, pod_info, nodes, diagnosis)
        if not feasible:
            raise FitError(pod_info=pod_info, num_all_nodes=len(nodes), diagnosis=diagnosis)
        return feasible

    def _filter(
        self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        filters = self._framework.filters(state)
        count = len(nodes)
        wanted = num_feasible_nodes_to_find(count, self._percentage)
        start = self._next_start % count
        feasible: list[NodeInfo] = []
        append = feasible.append
        statuses = diagnosis.node_to_status
        unschedulable_plugins = diagnosis.unschedulable_plugins
        name = ""
        try:
            # From nextStartNodeIndex round the list once; nodes past the stop are not touched.
            for index in chain(range(start, count), range(start)):
                node = nodes[index]
                for name, fn in filters:
                    status = fn(state, pod_info, node)
                    if status.code:
                        if not status.is_rejected:
                            # Filter may only reject; anything else aborts the attempt.
                            raise SchedulingFailure(_filter_error(name, status.message))
                        statuses[node.name] = status.with_plugin(name)
                        unschedulable_plugins.add(name)
                        break
                else:
                    append(node)
                    if len(feasible) >= wanted:
                        break
        except SchedulingFailure:
            raise
        except Exception as err:
            raise SchedulingFailure(_filter_error(name, str(err) or type(err).__name__)) from err
        # Every node examined either passed or has its status (upstream's processedNodes).
        self._next_start = (start + len(feasible) + len(statuses)) % count
        return feasible


def _filter_error(plugin: str, message: str) -> Status:
    return Status.error(f'running "{plugin}" filter plugin: {message}').with_plugin(plugin)


def _select_host(scores: dict[str, int]) -> str:
    """The best-scored node; ties are broken uniformly at random (kube-scheduler samples a
    reservoir; one draw among the tied nodes gives every one of them the same chance)."""
    if not scores:
        return ""
    best_score = max(scores.values())
    ties = [name for name, score in scores.items() if score == best_score]
    return ties[0] if len(ties) == 1 else random.choice(ties)
