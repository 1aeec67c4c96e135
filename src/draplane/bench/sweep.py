"""`--sweep-nodes 100,500,1000,5000`: one scheduling workload (`basic` above all) at each node
count, in one invocation, so that growth with the cluster's size is visible.

Every point is one `run_once` (hints on) with the workload's pods; DIR/result.json holds one
object per point (the run's figures), DIR/growth.json the curve (per point: nodes, the nodes the
adaptive percentageOfNodesToScore examines, the scheduler's algorithm CPU per attempt, the whole
process's CPU per pod, throughput) and DIR/growth.png plots it (`growthplot`).
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from draplane.bench.progress import NullProgress, ProgressSink
from draplane.bench.result import write_json
from draplane.bench.runconfig import RunConfig, Timeouts
from draplane.bench.runner import run_once
from draplane.bench.scale import sized
from draplane.bench.workloads import Workload

CURVE_KEYS = (
    "nodes", "measured_pods", "nodes_to_find", "algorithm_cpu_ms_per_attempt",
    "algorithm_us_per_node_examined", "cpu_s_per_pod", "throughput_avg", "attempts_per_pod",
    "peak_rss_mib",
)  # fmt: skip


def parse_counts(text: str) -> tuple[int, ...]:
    """ "100,500,1000" -> (100, 500, 1000); ValueError unless every entry is a positive int."""
    try:
        counts = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"--sweep-nodes {text!r}: comma-separated node counts") from None
    if not counts or any(n < 1 for n in counts):
        raise ValueError(f"--sweep-nodes {text!r}: at least one count, each at least 1")
    return counts


@dataclass(frozen=True)
class SweepOptions:
    workload: Workload
    nodes: Sequence[int]
    scale: str = "full"
    store: str = "memory"
    output: Path = Path("bench-out")
    pods: int | None = None
    """Measured pods at every point (default: the workload's)."""
    timeouts: Timeouts = field(default_factory=Timeouts)


async def run_sweep(
    options: SweepOptions, *, progress: ProgressSink | None = None
) -> list[dict[str, Any]]:
    """Every point; writes result.json, growth.json and growth.png; returns the curve."""
    sink = progress if progress is not None else NullProgress()
    options.output.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    for nodes in options.nodes:
        config = RunConfig(
            workload=sized(options.workload, nodes=nodes, pods=options.pods),
            scale=options.scale,
            store=options.store,
            timeouts=options.timeouts,
        )
        result = await run_once(config, progress=sink)
        runs.append({**result.figures, "sweep": "nodes"})
        gc.collect()
    sink.close()
    curve = [{k: run.get(k) for k in CURVE_KEYS} for run in runs]
    write_json(options.output / "result.json", runs)
    write_json(options.output / "growth.json", curve)
    from draplane.bench.growthplot import write_growth_png

    write_growth_png(
        options.output / "growth.png",
        curve,
        title=f"{options.workload.name}: growth with nodes ({options.scale}, "
        f"store={options.store})",
    )
    return curve


def print_sweep_summary(console: Console, curve: Sequence[Mapping[str, Any]]) -> None:
    table = Table(title="draplane bench: growth with nodes")
    for key in CURVE_KEYS:
        table.add_column(key, justify="right")
    for point in curve:
        table.add_row(*(_format(point.get(key)) for key in CURVE_KEYS))
    console.print(table)


def _format(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
