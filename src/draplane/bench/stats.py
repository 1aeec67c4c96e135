"""Pure figure arithmetic: percentiles, 1-s throughput windows, latency summaries, metric deltas.

Throughput follows scheduler_perf: pods bound per 1 s window, counted from the start of the
measured phase; windows after the last measured pod binds are dropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from prometheus_client import CollectorRegistry

ATTEMPT_RESULTS = ("scheduled", "unschedulable", "error")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of `values`; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def throughput_series(bind_times: Iterable[float], *, start: float) -> list[int]:
    """Pods bound in each 1 s window [start + i, start + i + 1) up to the last binding."""
    offsets = [t - start for t in bind_times]
    if not offsets:
        return []
    series = [0] * (math.floor(max(offsets)) + 1)
    for offset in offsets:
        series[max(0, math.floor(offset))] += 1
    return series


def cumulative_binds(offsets: Iterable[float]) -> tuple[list[float], list[int]]:
    """(seconds, pods bound so far) at the start and at each binding, for a step plot whose
    slope is the throughput: readable however short the run (a 1 s window is not)."""
    xs: list[float] = [0.0]
    ys: list[int] = [0]
    for count, offset in enumerate(sorted(offsets), start=1):
        xs.append(max(0.0, offset))
        ys.append(count)
    return xs, ys


def throughput_samples(series: Sequence[int], *, duration: float) -> list[float]:
    """The per-window rates the percentiles are taken over.

    Full windows count as they are. The last, partial window counts as a rate when it covers at
    least half a second (shorter ones are too noisy); a run shorter than that gives one sample,
    its average rate.
    """
    full = math.floor(duration)
    samples = [float(n) for n in series[:full]]
    tail = duration - full
    if len(series) > full and tail >= 0.5:
        samples.append(series[full] / tail)
    if not samples and duration > 0:
        samples.append(sum(series) / duration)
    return samples


def summarize(
    values: Sequence[float], *, prefix: str, quantiles: Sequence[int]
) -> dict[str, float]:
    return {f"{prefix}_p{q}": percentile(values, q) for q in quantiles}


def counter_by_label(registry: CollectorRegistry, *, name: str, label: str) -> dict[str, float]:
    """Sum of counter `name`'s samples grouped by `label` (other labels summed over)."""
    totals: dict[str, float] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name != name:
                continue
            key = sample.labels.get(label, "")
            totals[key] = totals.get(key, 0.0) + sample.value
    return totals


def gauge_by_label(registry: CollectorRegistry, *, name: str, label: str) -> dict[str, float]:
    return counter_by_label(registry, name=name, label=label)


def delta(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    return {k: after.get(k, 0.0) - before.get(k, 0.0) for k in sorted({*after, *before})}


def per_pod(counts: Mapping[str, float], pods: int) -> dict[str, float]:
    return {k: round(v / pods, 3) for k, v in sorted(counts.items())} if pods else {}
