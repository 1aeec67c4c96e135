"""The scheduler's per-attempt cost against the nodes it examines: the algorithm figures
every scheduling run records (the thread CPU the scheduler spent in Filter and Score, which
run synchronously, per attempt counted by `scheduler_scheduling_algorithm_duration_seconds`;
CPU rather than wall time, which a shared machine inflates) beside the number of feasible nodes
the adaptive percentageOfNodesToScore has the scheduler look for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from draplane.bench.histograms import HistogramSnapshot
from draplane.bench.stats import counter_by_label
from draplane.scheduler.algorithm import num_feasible_nodes_to_find

ALGORITHM_METRIC = "scheduler_scheduling_algorithm_duration_seconds"
ALGORITHM_CPU_METRIC = "draplane_scheduler_scheduling_algorithm_cpu_seconds_total"


@dataclass(frozen=True)
class AlgorithmSnapshot:
    attempts: float
    cpu_seconds: float
    wall_seconds: float

    @staticmethod
    def take(registry: CollectorRegistry) -> AlgorithmSnapshot:
        wall = HistogramSnapshot.take(registry, name=ALGORITHM_METRIC)
        cpu = sum(counter_by_label(registry, name=ALGORITHM_CPU_METRIC, label="").values())
        return AlgorithmSnapshot(wall.count, cpu, wall.total)


def algorithm_figures(
    *, after: AlgorithmSnapshot, before: AlgorithmSnapshot, nodes: int
) -> dict[str, Any]:
    """The scheduling algorithm's mean CPU (and wall) cost per attempt over the window, and
    the nodes the adaptive percentageOfNodesToScore has it look for."""
    count = after.attempts - before.attempts
    mean = 1000 * (after.cpu_seconds - before.cpu_seconds) / count if count > 0 else None
    wall = 1000 * (after.wall_seconds - before.wall_seconds) / count if count > 0 else None
    to_find = num_feasible_nodes_to_find(nodes)
    return {
        "algorithm_cpu_ms_per_attempt": None if mean is None else round(mean, 4),
        "algorithm_wall_ms_per_attempt": None if wall is None else round(wall, 4),
        "nodes_to_find": to_find,
        "algorithm_us_per_node_examined": None if mean is None else round(1000 * mean / to_find, 3),
    }
