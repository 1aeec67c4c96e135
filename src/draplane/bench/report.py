"""The summary printed at the end of `draplane bench`: one column per hints mode (medians when
several runs), and the on/off ratio of each figure when both modes ran.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from draplane.bench.stats import ATTEMPT_RESULTS

SUMMARY_ROWS: tuple[tuple[str, str], ...] = (
    ("scheduled_pods", "measured pods scheduled"),
    ("duration_s", "measured phase (s)"),
    ("throughput_avg", "throughput avg (pods/s)"),
    ("throughput_p50", "throughput p50"),
    ("throughput_p90", "throughput p90"),
    ("throughput_p99", "throughput p99"),
    ("throughput_avg_per_core", "throughput avg per core"),
    ("attempts_per_pod", "attempts per pod"),
    ("attempt_duration_p50_ms", "attempt duration p50 (ms)"),
    ("attempt_duration_mean_ms", "attempt duration mean (ms)"),
    ("latency_p50_s", "latency p50 (s)"),
    ("latency_p90_s", "latency p90 (s)"),
    ("latency_p99_s", "latency p99 (s)"),
    ("latency_max_s", "latency max (s)"),
    ("writes_per_pod", "writes per pod"),
    ("server_write_mean_ms", "API server write mean (ms)"),
    ("watch_events_per_pod_all", "watch events per pod"),
    ("watch_events_per_write", "watch events per write"),
    ("conflicts", "409 conflicts"),
    ("cpu_s_per_pod", "CPU s per pod"),
    ("peak_rss_mib", "peak RSS (MiB)"),
)


def _format(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def _conditions(figures: Mapping[str, Any]) -> str:
    return (
        f"{figures['workload']} scale={figures['scale']} nodes={figures['nodes']} "
        f"store={figures['store']} transport={figures['transport']} "
        f"kubernetes={figures.get('kubernetes_version', '-')} "
        f"pre-enqueue={figures.get('pre_enqueue', 'on')} python={figures['python']} "
        f"cores={figures['cores']} runs={figures.get('runs', 1)}"
    )


def _rows(
    medians: Mapping[str, Mapping[str, Any]], ratios: Mapping[str, float | None] | None
) -> Iterator[list[str]]:
    for key, label in SUMMARY_ROWS:
        row = [label, *(_format(figures.get(key)) for figures in medians.values())]
        if ratios is not None:
            ratio = ratios.get(key)
            row.append(f"{ratio:.2f}x" if ratio is not None else "")
        yield row
        if key == "attempts_per_pod":
            for result in ATTEMPT_RESULTS:
                by_result = [
                    (f.get("attempts_by_result") or {}).get(result) for f in medians.values()
                ]
                yield [
                    f"  {result}",
                    *map(_format, by_result),
                    *([""] if ratios is not None else []),
                ]


def summary_table(
    medians: Mapping[str, Mapping[str, Any]],
    *,
    ratios: Mapping[str, float | None] | None = None,
) -> Table:
    """`medians` maps a column title (e.g. "hints on") to that mode's median figures."""
    first = next(iter(medians.values()))
    table = Table(title=f"draplane bench {first['workload']}")
    table.add_column("figure")
    for title in medians:
        table.add_column(title, justify="right")
    if ratios is not None:
        table.add_column("on / off", justify="right")
    for row in _rows(medians, ratios):
        table.add_row(*row)
    return table


def print_summary(
    console: Console,
    medians: Mapping[str, Mapping[str, Any]],
    *,
    ratios: Mapping[str, float | None] | None = None,
) -> None:
    console.print(_conditions(next(iter(medians.values()))))
    console.print(summary_table(medians, ratios=ratios))
    if ratios is not None:
        shown = ", ".join(f"{k}={v:.2f}x" for k, v in ratios.items() if v is not None)
        console.print(f"hints on/off ratios: {shown}")


def process_usage_table(medians: Mapping[str, Mapping[str, Any]]) -> Table | None:
    """`--processes`: CPU seconds (per pod) of the measured phase and peak RSS of each process
    and in total, one column pair per hints mode; None for an in-process run."""
    runs = {title: f for title, f in medians.items() if f.get("process_cpu_s")}
    if not runs:
        return None
    table = Table(title="processes (measured phase)")
    table.add_column("process")
    for title in runs:
        table.add_column(f"{title}: CPU s", justify="right")
        table.add_column("CPU ms/pod", justify="right")
        table.add_column("peak RSS MiB", justify="right")
    names = sorted({name for f in runs.values() for name in f["process_cpu_s"]})
    for name in names:
        row = [name]
        for f in runs.values():
            per_pod = (f.get("process_cpu_s_per_pod") or {}).get(name)
            row += [
                _format(f["process_cpu_s"].get(name)),
                _format(None if per_pod is None else per_pod * 1000),
                _format((f.get("process_peak_rss_mib") or {}).get(name)),
            ]
        table.add_row(*row)
    total = ["total"]
    for f in runs.values():
        total += [
            _format(f.get("cpu_s")),
            _format(f["cpu_s_per_pod"] * 1000),
            _format(f.get("peak_rss_mib")),
        ]
    table.add_row(*total)
    return table


def print_process_usage(console: Console, medians: Mapping[str, Mapping[str, Any]]) -> None:
    table = process_usage_table(medians)
    if table is not None:
        console.print(table)
