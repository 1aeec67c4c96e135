"""`report.png`: pods bound per second over the measured phase, and the latency distribution
(empirical CDF), one line per hints mode so that on and off overlay when compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from draplane.bench.result import RunResult


def write_report_png(path: Path, runs: Mapping[str, RunResult], *, title: str) -> None:
    """`runs` maps a label (e.g. "hints on") to the run that stands for that mode."""
    figure, (throughput_ax, latency_ax) = plt.subplots(1, 2, figsize=(12, 4.5))
    try:
        for label, run in runs.items():
            series = run.throughput_series
            throughput_ax.step(range(1, len(series) + 1), series, where="pre", label=label)
            ordered = sorted(run.latencies)
            fractions = [(i + 1) / len(ordered) for i in range(len(ordered))]
            latency_ax.step(ordered, fractions, where="post", label=label)
        throughput_ax.set(
            title="throughput", xlabel="second of the measured phase", ylabel="pods bound / s"
        )
        latency_ax.set(
            title="latency: creation -> bound", xlabel="seconds", ylabel="fraction of pods"
        )
        for axes in (throughput_ax, latency_ax):
            axes.grid(alpha=0.3)
            axes.legend()
        figure.suptitle(title)
        figure.tight_layout()
        figure.savefig(path, dpi=100)
    finally:
        plt.close(figure)
