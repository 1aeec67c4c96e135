"""What the API and component benchmarks (api-create, api-watch, claim-controller, lifecycle)
share: the run spec a workload gets, the summary rows it declares with their targets, size
scaling, and the conditions recorded with every run.
"""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draplane.api import versions
from draplane.bench.apihost import Transport
from draplane.bench.figures import cores, peak_rss_mib
from draplane.bench.progress import NullProgress, ProgressSink


@dataclass(frozen=True)
class SuiteRun:
    """One run of a suite workload: sizes are divided by `divisor` (10 for --scale small)."""

    scale: str = "full"
    divisor: int = 1
    store: str = "sqlite"
    transports: tuple[Transport, ...] = ("local",)
    hints: bool = True
    progress: ProgressSink = field(default_factory=NullProgress)
    kubernetes_version: versions.Mode = versions.DEFAULT
    """The mode the workload's control plane serves (`workloads.in_mode` shapes its claims)."""
    nodes: int | None = None
    """`--nodes`: replaces the workload's node count (lifecycle, density)."""
    pods: int | None = None
    """`--pods`: replaces the workload's pod count (lifecycle, density)."""
    processes: bool = False
    """`--processes`: every component in its own process (workloads that say they can)."""

    def size(self, full: int, *, floor: int = 1) -> int:
        return max(floor, full // self.divisor)


@dataclass(frozen=True)
class Row:
    """A summary line: the figure's key in result.json, its label and its target, if any."""

    key: str
    label: str
    at_least: float | None = None
    at_most: float | None = None

    @property
    def target(self) -> str:
        if self.at_least is not None:
            return f">= {self.at_least:g}"
        if self.at_most is not None:
            return f"<= {self.at_most:g}"
        return ""

    def met(self, value: Any) -> bool | None:
        """None when the row has no target or the value is missing."""
        if not isinstance(value, int | float) or (self.at_least is None and self.at_most is None):
            return None
        if self.at_least is not None and value < self.at_least:
            return False
        return not (self.at_most is not None and value > self.at_most)


@dataclass(frozen=True)
class SuiteWorkload:
    name: str
    description: str
    run: Callable[[SuiteRun], Awaitable[dict[str, Any]]]
    rows: Callable[[SuiteRun], tuple[Row, ...]]
    """The summary rows for a run spec (per-transport rows depend on the transports)."""
    default_transports: tuple[Transport, ...] = ("local",)
    processes: bool = False
    """Whether it runs with `--processes` (each component in its own process)."""


def commit() -> str:
    """`git rev-parse --short HEAD` of the source tree draplane runs from, "" outside git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def conditions(name: str, run: SuiteRun) -> dict[str, Any]:
    return {
        "workload": name,
        "scale": run.scale,
        "store": run.store,
        "transport": "http" if run.processes else ",".join(run.transports),
        "processes": run.processes,
        "kubernetes_version": str(run.kubernetes_version),
        "python": platform.python_version(),
        "cores": cores(),
        "commit": commit(),
        "peak_rss_mib": peak_rss_mib(),
    }
