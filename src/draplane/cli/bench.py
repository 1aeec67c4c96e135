"""`draplane bench WORKLOAD`: scheduler_perf's DRA workloads against the whole control plane in
this process; progress on stderr, a summary table on stdout, result.json / summary.json /
report.png (and profile.html / profile.txt with --profile) in the output directory. The API and
component workloads (api-create, api-watch, claim-controller, lifecycle) write result.json and
summary.json and print each figure beside its target. Each workload runs in its mode
(`workloads.bench_mode`): classic-* in 1.28, the others in 1.36 unless `--kubernetes-version
1.28`. `--nodes` / `--pods` resize a workload; `--sweep-nodes` runs a scheduling workload at
several node counts and writes growth.json and growth.png.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from draplane.api import versions
from draplane.bench.progress import progress_for
from draplane.bench.report import print_process_usage, print_summary
from draplane.bench.runconfig import BenchError
from draplane.bench.session import BenchOptions, run_bench
from draplane.bench.suitesession import SUITE, SuiteOptions, print_suite_summary, run_suite
from draplane.bench.sweep import SweepOptions, parse_counts, print_sweep_summary, run_sweep
from draplane.bench.workloads import SCALES, WORKLOADS, workload
from draplane.cli.fleetflag import add_fleet_flag
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import positive
from draplane.dra.controller import DRIVER_WORKERS

log = logging.getLogger(__name__)


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "bench",
        help="benchmark scheduling with scheduler_perf's DRA workloads",
        description="Runs the whole control plane in this process against one workload and "
        "reports throughput, attempts, latency, API writes and cost per pod.",
    )
    parser.add_argument("workload", choices=sorted(WORKLOADS) + sorted(SUITE))
    parser.add_argument(
        "--scale",
        choices=SCALES,
        default="full",
        help="full: scheduler_perf's sizes; small: a tenth",
    )
    parser.add_argument(
        "--hints",
        choices=("on", "off", "compare"),
        default=None,
        help="queueing hints; compare (the default for scheduling workloads) runs both and "
        "prints on/off ratios; lifecycle: on (default) or off",
    )
    parser.add_argument("--pre-enqueue", choices=("on", "off"), default="on")
    parser.add_argument(
        "--driver-workers",
        type=positive,
        default=DRIVER_WORKERS,
        help="workers of the example driver's controller (classic DRA; default "
        f"{DRIVER_WORKERS}, as scheduler_perf runs its test driver)",
    )
    parser.add_argument(
        "--store",
        default="sqlite",
        help='"sqlite" (fresh temporary database, default), "memory", a '
        'sqlite:///FILE URL (one run only) or "etcd" (a fresh local single-member etcd)',
    )
    parser.add_argument(
        "--transport",
        choices=("local", "http"),
        default=None,
        help="local (default) or http; api-create and api-watch measure both unless given",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("bench-out"),
        help="directory for result.json, summary.json, report.png",
    )
    parser.add_argument(
        "--processes",
        action="store_true",
        help="scheduling workloads and density: API server, controller-manager, scheduler, "
        "driver and nodes each in its own process over HTTPS (as `draplane up --processes`), "
        "the bench a client; CPU and peak RSS per process",
    )
    parser.add_argument("--runs", type=int, default=1, help="runs per mode; figures are medians")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile the whole process with pyinstrument (profile.html/.txt)",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=None,
        help="replace the workload's node count (basic and the other scheduling workloads, "
        "lifecycle, density)",
    )
    parser.add_argument(
        "--pods",
        type=int,
        default=None,
        help="replace the workload's measured pod count (as --nodes; object-memory: objects "
        "of each kind)",
    )
    parser.add_argument(
        "--sweep-nodes",
        default=None,
        metavar="N,N,...",
        help="scheduling workloads: one hints-on run at each node count; growth.png plots "
        "the cost per attempt and per pod against the nodes",
    )
    add_fleet_flag(parser)
    # Divides the chosen scale's counts further; for the test suite, not for figures.
    parser.add_argument("--shrink", type=int, default=1, help=argparse.SUPPRESS)
    versions.add_argument(
        parser,
        server=True,
        default_help="the workload's: 1.28 for classic-*, 1.36 for the others",
    )
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


def options_from_args(args: argparse.Namespace) -> BenchOptions:
    options = BenchOptions(
        workload=args.workload,
        scale=args.scale,
        hints=args.hints or "compare",
        pre_enqueue=args.pre_enqueue == "on",
        driver_workers=args.driver_workers,
        store=args.store,
        transport=args.transport or "local",
        nodes=args.nodes,
        pods=args.pods,
        output=args.output,
        runs=args.runs,
        kubernetes_version=args.kubernetes_version,
        processes=args.processes,
        fleet=args.fleet,
    )
    if args.shrink > 1:
        options = replace(options, shape=workload(args.workload, args.scale).shrunk(args.shrink))
    return options


@contextlib.contextmanager
def _profiled(enabled: bool, output: Path) -> Iterator[None]:
    if not enabled:
        yield
        return
    from pyinstrument import Profiler

    # async_mode "disabled": sample the loop's thread as it is, every component included.
    profiler = Profiler(interval=0.001, async_mode="disabled")
    profiler.start()
    try:
        yield
    finally:
        profiler.stop()
        output.mkdir(parents=True, exist_ok=True)
        (output / "profile.html").write_text(profiler.output_html())
        (output / "profile.txt").write_text(profiler.output_text(unicode=True, show_all=False))


def suite_options_from_args(args: argparse.Namespace) -> SuiteOptions:
    if args.fleet is not None:
        raise ValueError(f"--fleet is for the scheduling workloads, not {args.workload}")
    if args.hints == "compare":
        raise ValueError(f"--hints compare is for the scheduling workloads, not {args.workload}")
    return SuiteOptions(
        workload=args.workload,
        scale=args.scale,
        store=args.store,
        transports=(args.transport,) if args.transport else (),
        hints=args.hints != "off",
        output=args.output,
        runs=args.runs,
        shrink=args.shrink,
        kubernetes_version=args.kubernetes_version,
        nodes=args.nodes,
        pods=args.pods,
        processes=args.processes,
    )


def sweep_options_from_args(args: argparse.Namespace) -> SweepOptions:
    if args.workload in SUITE:
        raise ValueError(f"--sweep-nodes is for the scheduling workloads, not {args.workload}")
    if args.nodes is not None:
        raise ValueError("--sweep-nodes and --nodes: give one of them")
    if args.hints == "compare" or args.runs != 1:
        raise ValueError("--sweep-nodes runs hints on, once per point")
    base = options_from_args(args).resolve()
    return SweepOptions(
        workload=base,
        nodes=parse_counts(args.sweep_nodes),
        scale=args.scale,
        store=args.store,
        output=args.output,
    )


def _resolved(args: argparse.Namespace) -> BenchOptions | SuiteOptions | SweepOptions:
    """The run's options from the flags; ValueError on a bad combination."""
    if getattr(args, "sweep_nodes", None):
        return sweep_options_from_args(args)
    options: BenchOptions | SuiteOptions = (
        suite_options_from_args(args) if args.workload in SUITE else options_from_args(args)
    )
    options.resolve()
    return options


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    if args.verbosity < 1:
        # Per-object INFO lines (claims created, pods unschedulable) would cost the figures
        # their formatting and terminal time; -v 1 and up bring them back.
        logging.getLogger("draplane").setLevel(logging.WARNING)
    try:
        options = _resolved(args)
    except ValueError as err:
        print(f"draplane bench: {err}", file=sys.stderr)
        return 2
    progress = progress_for(Console(stderr=True))
    try:
        with _profiled(args.profile, options.output):
            if isinstance(options, SweepOptions):
                curve = await run_sweep(options, progress=progress)
            elif isinstance(options, SuiteOptions):
                medians = await run_suite(options, progress=progress)
            else:
                outcome = await run_bench(options, progress=progress)
    except BenchError as err:
        progress.close()
        print(f"draplane bench: {err}", file=sys.stderr)
        return 1
    if isinstance(options, SweepOptions):
        print_sweep_summary(Console(), curve)
        print(f"results: {options.output / 'result.json'}, plot: {options.output / 'growth.png'}")
    elif isinstance(options, SuiteOptions):
        print_suite_summary(Console(), options, medians)
        print_process_usage(Console(), {"measured": medians})
        print(f"results: {options.output / 'result.json'}")
    else:
        print_summary(Console(), outcome.medians, ratios=outcome.ratios)
        print_process_usage(Console(), outcome.medians)
        print(f"results: {options.output / 'result.json'}, plot: {options.output / 'report.png'}")
    return 0
