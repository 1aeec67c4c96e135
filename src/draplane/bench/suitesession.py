"""`run_suite`: every run of one `draplane bench` invocation of an API or component workload
(api-create, api-watch, claim-controller, lifecycle, deployment, and the scale workloads density
and object-memory), DIR/result.json (one object per run) and
DIR/summary.json (medians), and the summary table with each figure's target.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from draplane.api import errors, versions
from draplane.bench.apicreate import API_CREATE
from draplane.bench.apihost import Transport
from draplane.bench.apiwatch import API_WATCH
from draplane.bench.claimcontroller import CLAIM_CONTROLLER
from draplane.bench.density import DENSITY_WORKLOAD
from draplane.bench.deployment import DEPLOYMENT
from draplane.bench.lifecycle import LIFECYCLE
from draplane.bench.objectmemory import OBJECT_MEMORY
from draplane.bench.observer import BenchTimeout
from draplane.bench.progress import NullProgress, ProgressSink
from draplane.bench.result import median_figures, write_json
from draplane.bench.runconfig import BenchError
from draplane.bench.suite import SuiteRun, SuiteWorkload, conditions
from draplane.bench.workloads import SCALES, SMALL_DIVISOR, bench_mode

SUITE: dict[str, SuiteWorkload] = {
    w.name: w
    for w in (
        API_CREATE,
        API_WATCH,
        CLAIM_CONTROLLER,
        LIFECYCLE,
        DEPLOYMENT,
        DENSITY_WORKLOAD,
        OBJECT_MEMORY,
    )
}
SIZED = ("lifecycle", "density", "object-memory")
"""The suite workloads that take `--nodes` / `--pods`."""


@dataclass(frozen=True)
class SuiteOptions:
    workload: str
    scale: str = "full"
    store: str = "sqlite"
    transports: tuple[Transport, ...] = ()
    """Empty: the workload's default (api-create and api-watch measure both)."""
    hints: bool = True
    output: Path = Path("bench-out")
    runs: int = 1
    shrink: int = 1
    kubernetes_version: versions.Mode | None = None
    """None: the workload's own mode (`bench_mode`)."""
    nodes: int | None = None
    pods: int | None = None
    processes: bool = False

    def resolve(self) -> tuple[SuiteWorkload, SuiteRun]:
        """The workload and its run spec; ValueError for bad names or combinations."""
        if self.workload not in SUITE:
            raise ValueError(f"unknown workload {self.workload!r}: one of {', '.join(SUITE)}")
        if self.scale not in SCALES:
            raise ValueError(f"unknown scale {self.scale!r}: one of {', '.join(SCALES)}")
        if self.runs < 1:
            raise ValueError("--runs must be at least 1")
        if self.store not in ("memory", "sqlite", "etcd") and self.runs > 1:
            raise ValueError(f"store {self.store!r} keeps one run's objects: use it with --runs 1")
        given = [n for n in (self.nodes, self.pods) if n is not None]
        if given and self.workload not in SIZED:
            raise ValueError(f"--nodes / --pods: not for {self.workload} (only {', '.join(SIZED)})")
        if any(n < 1 for n in given):
            raise ValueError("--nodes and --pods must be at least 1")
        found = SUITE[self.workload]
        if self.processes and not found.processes:
            raise ValueError(
                f"--processes is for the scheduling workloads and density, not {self.workload}"
            )
        divisor = (SMALL_DIVISOR if self.scale == "small" else 1) * max(1, self.shrink)
        spec = SuiteRun(
            scale=self.scale,
            divisor=divisor,
            store=self.store,
            transports=self.transports or found.default_transports,
            hints=self.hints,
            kubernetes_version=bench_mode(self.workload, self.kubernetes_version),
            nodes=self.nodes,
            pods=self.pods,
            processes=self.processes,
        )
        return found, spec


async def run_suite(
    options: SuiteOptions, *, progress: ProgressSink | None = None
) -> dict[str, Any]:
    """All runs; writes result.json and summary.json; returns the median figures.
    Raises BenchError when a run cannot complete."""
    found, spec = options.resolve()
    sink = progress if progress is not None else NullProgress()
    spec = replace(spec, progress=sink)
    runs: list[dict[str, Any]] = []
    options.output.mkdir(parents=True, exist_ok=True)
    for index in range(options.runs):
        try:
            figures = await found.run(spec)
        except (BenchTimeout, TimeoutError, errors.StatusError, RuntimeError) as err:
            sink.close()
            raise BenchError(f"{found.name} run {index + 1}: {err or type(err).__name__}") from err
        runs.append({**conditions(found.name, spec), **figures, "run": index + 1})
        gc.collect()
        await asyncio.sleep(0)
    sink.close()
    medians = median_figures(runs)
    write_json(options.output / "result.json", runs)
    write_json(options.output / "summary.json", {"medians": medians})
    return medians


def _format(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def suite_table(name: str, medians: Mapping[str, Any], *, spec: SuiteRun) -> Table:
    table = Table(title=f"draplane bench {name}")
    for column in ("figure", "value", "target", "met"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for row in SUITE[name].rows(spec):
        met = row.met(medians.get(row.key))
        shown = "" if met is None else ("yes" if met else "NO")
        table.add_row(row.label, _format(medians.get(row.key)), row.target, shown)
    return table


def print_suite_summary(
    console: Console, options: SuiteOptions, medians: Mapping[str, Any]
) -> None:
    _, spec = options.resolve()
    console.print(
        f"{medians['workload']} scale={medians['scale']} store={medians['store']} "
        f"transport={medians['transport']} kubernetes={medians.get('kubernetes_version', '-')} "
        f"python={medians['python']} cores={medians['cores']} "
        f"commit={medians.get('commit') or '-'} runs={medians.get('runs', 1)}"
    )
    console.print(suite_table(options.workload, medians, spec=spec))
