"""Quantiles of a Prometheus histogram over a window (the difference of two snapshots), as
PromQL's `histogram_quantile` computes them: linear interpolation inside the bucket; the
snapshots summed over every label, or one per value of a label (`by_label`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
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
        """The histogram `name` summed over all its labels (empty when it is absent)."""
        return HistogramSnapshot.by_label(registry, name=name, label="").get(
            "", HistogramSnapshot()
        )

    @staticmethod
    def by_label(
        registry: CollectorRegistry, *, name: str, label: str
    ) -> dict[str, HistogramSnapshot]:
        """The histogram `name` per value of `label`, summed over its other labels; `label=""`
        sums everything under the key ""."""
        parts: dict[str, tuple[dict[float, float], list[float]]] = {}
        for family in registry.collect():
            for sample in family.samples:
                if not sample.name.startswith(name):
                    continue
                suffix = sample.name[len(name) :]
                if suffix not in ("_bucket", "_sum", "_count"):
                    continue
                key = sample.labels.get(label, "") if label else ""
                buckets, sums = parts.setdefault(key, ({}, [0.0, 0.0]))
                if suffix == "_bucket":
                    le = float(sample.labels["le"])
                    buckets[le] = buckets.get(le, 0.0) + sample.value
                else:
                    sums[0 if suffix == "_sum" else 1] += sample.value
        return {
            key: HistogramSnapshot(buckets, sums[0], sums[1])
            for key, (buckets, sums) in parts.items()
        }

    @staticmethod
    def combined(snapshots: Iterable[HistogramSnapshot]) -> HistogramSnapshot:
        """Several series of one histogram (same buckets) as one."""
        buckets: dict[float, float] = {}
        total = count = 0.0
        for snapshot in snapshots:
            for le, n in snapshot.buckets.items():
                buckets[le] = buckets.get(le, 0.0) + n
            total += snapshot.total
            count += snapshot.count
        return HistogramSnapshot(buckets, total, count)

    def minus(self, before: HistogramSnapshot) -> HistogramSnapshot:
        """The observations made since `before` (a snapshot of the same series)."""
        return HistogramSnapshot(
            {le: n - before.buckets.get(le, 0.0) for le, n in self.buckets.items()},
            self.total - before.total,
            self.count - before.count,
        )

    def bound_of_all(self) -> float | None:
        """The smallest finite bucket bound every observation stayed within; None when there
        were none or some exceeded the largest finite bound."""
        if self.count <= 0:
            return None
        return next(
            (
                le
                for le in sorted(self.buckets)
                if self.buckets[le] >= self.count and not math.isinf(le)
            ),
            None,
        )


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
    window."""
    return duration_figures(after=after, before=before, prefix="attempt_duration")


def duration_figures(
    *, after: HistogramSnapshot, before: HistogramSnapshot, prefix: str
) -> dict[str, float | None]:
    """Mean, p50 and p99 in ms of a seconds histogram over the window, as
    `<prefix>_mean_ms`, `<prefix>_p50_ms`, `<prefix>_p99_ms` (the quantiles interpolated within
    the metric's buckets; None when nothing was observed)."""
    count = after.count - before.count
    figures: dict[str, float | None] = {
        f"{prefix}_mean_ms": (
            round(1000 * (after.total - before.total) / count, 3) if count > 0 else None
        )
    }
    for q in (50, 99):
        value = histogram_quantile(q / 100, after=after, before=before)
        figures[f"{prefix}_p{q}_ms"] = None if value is None else round(1000 * value, 3)
    return figures
