"""What one benchmark run is given (`RunConfig`, with its `Timeouts`), how it fails
(`BenchError`) and how its progress names it (`label`): shared by the in-process run (`runner`),
the run over processes (`processrun`), their phases and figures, and the suite."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from draplane.bench.workloads import Workload
from draplane.dra.controller import DRIVER_WORKERS

ATTEMPTS_METRIC = "scheduler_schedule_attempts_total"


class BenchError(RuntimeError):
    """The run could not complete; the message says which phase and why."""


@dataclass(frozen=True)
class Timeouts:
    """Seconds. A phase of P pods with C claims each (W = P * max(1, C)) may take
    base + per_pod * W in all, and stall + stall_per_pod * W without one more pod bound."""

    base: float = 60.0
    per_pod: float = 1.0
    stall: float = 60.0
    stall_per_pod: float = 0.1
    """A scheduler works through its whole queue before the first binding; that takes longer
    with more pods, so the stall allowance grows with them."""
    settle: float = 30.0

    def phase(self, wl: Workload, pods: int) -> float:
        return self.base + self.per_pod * pods * max(1, wl.claims_per_pod)

    def stall_for(self, wl: Workload, pods: int) -> float:
        return self.stall + self.stall_per_pod * pods * max(1, wl.claims_per_pod)


@dataclass(frozen=True)
class RunConfig:
    workload: Workload
    scale: str
    hints: bool = True
    pre_enqueue: bool = True
    driver_workers: int = DRIVER_WORKERS
    """Workers of the example driver's controller (scheduler_perf runs its test driver's
    with 5)."""
    store: str = "sqlite"
    transport: Literal["local", "http"] = "local"
    data_dir: str | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    processes: bool = False
    """Every component in its own process over HTTPS (`bench.processrun`)."""
    log_path: Path | None = None
    """With `processes`: where the processes' log lines go."""


def label(config: RunConfig) -> str:
    return f"{config.workload.name} hints={'on' if config.hints else 'off'}"
