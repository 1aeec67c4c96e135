"""Quantiles of a Prometheus histogram over a window (the difference of two snapshots), as
PromQL's `histogram_quantile` computes them: linear interpolation inside the bucket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

ATTEMPT_DURATION_METRIC = "scheduler_scheduling_attempt_duration_seconds"


@dataclass(frozen=True)
class HistogramSnapshot:
    buckets: dict[float, float] = field(default_factory=dict)
    """Upper bound (`le`) -> cumulative count, summed over the other labels."""
    total: float = 0.0
    """Sum of the observations."""
    count: float = 0.0

    @staticmethod
    def take(registry: CollectorRegistry, *, name: str) -> HistogramSnapshot:
        buckets: dict[float, float] = {}
        total = count = 0.0
        for family in registry.collect():
            for sample in family.samples:
                if sample.name == f"{name}_bucket":
                    le = float(sample.labels["le"])
                    buckets[le] = buckets.get(le, 0.0) + sample.value
                elif sample.name == f"{name}_sum":
                    total += sample.value
                elif sample.name == f"{name}_count":
                    count += sample.value
        return HistogramSnapshot(buckets, total, count)


def histogram_quantile(
    q: float, *, after: HistogramSnapshot, before: HistogramSnapshot
) -> float | None:
    """The q-quantile (0..1) of the observations made between the snapshots; None when there
    were none. One landing in +Inf gives the last finite bound, as Prometheus does."""
    bounds = sorted(after.buckets)
    counts = [after.buckets[b] - before.buckets.get(b, 0.0) for b in bounds]
    if not counts or counts[-1] <= 0:
        return None
    rank = q * counts[-1]
    lower, below = 0.0, 0.0
    for bound, cumulative in zip(bounds, counts, strict=True):
        if cumulative >= rank:
            if math.isinf(bound):
                return lower
            inside = cumulative - below
            fraction = (rank - below) / inside if inside > 0 else 1.0
            return lower + (bound - lower) * fraction
        lower, below = bound, cumulative
    return lower


def attempt_duration_figures(
    *, after: HistogramSnapshot, before: HistogramSnapshot
) -> dict[str, float | None]:
    """Mean, p50 and p99 in ms of scheduler_scheduling_attempt_duration_seconds over the
    window (the quantiles interpolated within the metric's buckets)."""
    count = after.count - before.count
    figures: dict[str, float | None] = {
        "attempt_duration_mean_ms": (
            round(1000 * (after.total - before.total) / count, 3) if count > 0 else None
        )
    }
    for q in (50, 99):
        value = histogram_quantile(q / 100, after=after, before=before)
        figures[f"attempt_duration_p{q}_ms"] = None if value is None else round(1000 * value, 3)
    return figures
