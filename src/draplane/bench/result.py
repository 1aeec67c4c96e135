"""One run's figures as the `result.json` object (BENCHMARKS.md's keys, plus extras), the
median over several runs, and the hints on/off ratios.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from draplane.bench.stats import median

RESULT_KEYS: tuple[str, ...] = (
    "workload", "scale", "hints", "store", "transport", "nodes", "measured_pods",
    "scheduled_pods", "duration_s", "throughput_avg", "throughput_p50", "throughput_p90",
    "throughput_p99", "attempts_per_pod", "attempts_by_result", "latency_p50_s",
    "latency_p90_s", "latency_p99_s", "latency_max_s", "writes_per_pod",
    "writes_by_resource_verb", "conflicts", "cpu_s_per_pod", "peak_rss_mib", "python", "cores",
)  # fmt: skip
"""The contract's keys, in its order."""

CONDITION_KEYS = ("workload", "scale", "hints", "store", "transport", "nodes", "python", "cores")

RATIO_KEYS = (
    "throughput_avg", "throughput_p50", "throughput_p90", "throughput_p99", "attempts_per_pod",
    "latency_p50_s", "latency_p90_s", "latency_p99_s", "latency_max_s", "writes_per_pod",
    "cpu_s_per_pod",
)  # fmt: skip


@dataclass
class RunResult:
    """`figures` is the result.json object; the series feed the plots."""

    figures: dict[str, Any]
    throughput_series: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    bind_offsets: list[float] = field(default_factory=list)
    """When each measured pod was bound, in seconds since the measured phase started."""


def _median_value(values: Sequence[Any]) -> Any:
    first = values[0]
    if isinstance(first, bool | str) or first is None:
        return first
    if isinstance(first, int | float):
        value = median([float(v) for v in values])
        return round(value) if isinstance(first, int) else round(value, 4)
    if isinstance(first, dict):
        keys = sorted({k for v in values for k in v})
        return {k: _median_value([v.get(k, 0) for v in values]) for k in keys}
    return first


def median_figures(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Key by key median of several runs of one configuration (conditions taken from the
    first; numbers and per-key maps by median)."""
    if not runs:
        raise ValueError("no runs")
    keys = [k for k in runs[0] if k not in ("run", "throughput_series")]
    merged = {k: _median_value([r.get(k) for r in runs]) for k in keys}
    merged["runs"] = len(runs)
    return merged


def median_run(runs: Sequence[RunResult]) -> RunResult:
    """The run whose average throughput is the median: its series stand for the group."""
    ordered = sorted(runs, key=lambda r: float(r.figures["throughput_avg"]))
    return ordered[(len(ordered) - 1) // 2]


def ratios(on: dict[str, Any], off: dict[str, Any]) -> dict[str, float | None]:
    """on / off for each numeric figure; None where off is zero."""
    out: dict[str, float | None] = {}
    for key in RATIO_KEYS:
        a, b = on.get(key), off.get(key)
        if isinstance(a, int | float) and isinstance(b, int | float) and b:
            out[key] = round(float(a) / float(b), 3)
        else:
            out[key] = None
    return out


def write_json(path: Path, value: Any) -> None:
    path.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
