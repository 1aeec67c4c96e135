"""`run_bench`: every run of one `draplane bench` invocation, and what it leaves in the output
directory: result.json (one object per run), summary.json (medians, and on/off ratios when
compared) and report.png.

With `--hints compare` the on and off runs alternate, so that drift of a shared machine hits
both modes alike.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from draplane.api import versions
from draplane.bench.progress import NullProgress, ProgressSink
from draplane.bench.result import RunResult, median_figures, median_run, ratios, write_json
from draplane.bench.runconfig import RunConfig, Timeouts
from draplane.bench.runner import run_once
from draplane.bench.scale import sized
from draplane.bench.workloads import Workload, bench_mode, in_fleet, in_mode, workload
from draplane.dra.controller import DRIVER_WORKERS
from draplane.fleets import Fleet

HintsMode = Literal["on", "off", "compare"]


@dataclass(frozen=True)
class BenchOptions:
    workload: str
    scale: str = "full"
    hints: HintsMode = "compare"
    pre_enqueue: bool = True
    driver_workers: int = DRIVER_WORKERS
    """`--driver-workers`: the example driver controller's workers."""
    store: str = "sqlite"
    transport: Literal["local", "http"] = "local"
    output: Path = Path("bench-out")
    runs: int = 1
    nodes: int | None = None
    """`--nodes`: replaces the workload's node count."""
    pods: int | None = None
    """`--pods`: replaces the workload's measured pod count."""
    shape: Workload | None = None
    """Replaces the named workload's shape (tests shrink `small` further with it)."""
    timeouts: Timeouts = field(default_factory=Timeouts)
    kubernetes_version: versions.Mode | None = None
    """None: the workload's own mode (`bench_mode`)."""
    processes: bool = False
    """Every component in its own process over HTTPS; their logs go to processes.log."""
    fleet: Fleet | None = None
    """`--fleet`: the nodes and classes from a fleet profile (`workloads.in_fleet`)."""

    def resolve(self) -> Workload:
        """The workload to run; ValueError for a bad name, scale, mode or option combination."""
        found = workload(self.workload, self.scale)
        mode = bench_mode(self.workload, self.kubernetes_version)
        if self.runs < 1:
            raise ValueError("--runs must be at least 1")
        if self.store not in ("memory", "sqlite", "etcd") and (
            self.runs > 1 or self.hints == "compare"
        ):
            raise ValueError(
                f"store {self.store!r} keeps one run's objects: use it with --runs 1 and "
                "--hints on|off, or use sqlite / memory (a fresh store per run)"
            )
        shaped = sized(
            in_mode(self.shape if self.shape is not None else found, mode),
            nodes=self.nodes,
            pods=self.pods,
        )
        return shaped if self.fleet is None else in_fleet(shaped, self.fleet)


@dataclass
class BenchOutcome:
    runs: dict[str, list[RunResult]]
    """Column title ("hints on" / "hints off") -> its runs in order."""
    medians: dict[str, dict[str, Any]]
    ratios: dict[str, float | None] | None


def _modes(hints: HintsMode) -> list[bool]:
    return {"on": [True], "off": [False], "compare": [True, False]}[hints]


def _title(hints: bool) -> str:
    return "hints on" if hints else "hints off"


async def run_bench(options: BenchOptions, *, progress: ProgressSink | None = None) -> BenchOutcome:
    """All runs; writes the output directory; raises BenchError from a run that failed."""
    wl = options.resolve()
    sink = progress if progress is not None else NullProgress()
    base = RunConfig(
        workload=wl,
        scale=options.scale,
        pre_enqueue=options.pre_enqueue,
        driver_workers=options.driver_workers,
        store=options.store,
        transport=options.transport,
        timeouts=options.timeouts,
        processes=options.processes,
        log_path=options.output / "processes.log" if options.processes else None,
    )
    runs: dict[str, list[RunResult]] = {_title(h): [] for h in _modes(options.hints)}
    options.output.mkdir(parents=True, exist_ok=True)
    for index in range(options.runs):
        for hints in _modes(options.hints):
            result = await run_once(replace(base, hints=hints), progress=sink)
            result.figures["run"] = index + 1
            runs[_title(hints)].append(result)
            # The previous control plane's garbage must not be collected inside the next run.
            gc.collect()
    sink.close()
    return _finish(options, runs)


def _finish(options: BenchOptions, runs: dict[str, list[RunResult]]) -> BenchOutcome:
    medians = {title: median_figures([r.figures for r in group]) for title, group in runs.items()}
    compared = (
        ratios(medians["hints on"], medians["hints off"]) if options.hints == "compare" else None
    )
    write_json(options.output / "result.json", [r.figures for g in runs.values() for r in g])
    write_json(options.output / "summary.json", {"medians": medians, "ratios_on_off": compared})
    first = next(iter(medians.values()))
    # matplotlib takes a second to import: only runs that plot pay for it.
    from draplane.bench.plot import write_report_png

    write_report_png(
        options.output / "report.png",
        {title: median_run(group) for title, group in runs.items()},
        title=f"{first['workload']} ({first['scale']}, store={first['store']}, "
        f"transport={first['transport']}, runs={options.runs})",
    )
    return BenchOutcome(runs=runs, medians=medians, ratios=compared)
