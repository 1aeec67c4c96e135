"""`report.png`: pods bound over the measured phase (cumulative, so that its slope is the
throughput and a run shorter than a second still draws a line) and the latency distribution
(empirical CDF), one line per hints mode so that on and off overlay when compared. Each
throughput line is labelled with the run's average throughput, the table's figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from draplane.bench.result import RunResult
from draplane.bench.stats import cumulative_binds


def report_figure(runs: Mapping[str, RunResult], *, title: str) -> Figure:
    """`runs` maps a label (e.g. "hints on") to the run that stands for that mode."""
    figure, (throughput_ax, latency_ax) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, run in runs.items():
        xs, ys = cumulative_binds(run.bind_offsets)
        average = run.figures.get("throughput_avg", 0.0)
        throughput_ax.step(xs, ys, where="post", label=f"{label}: {average:.4g} pods/s avg")
        ordered = sorted(run.latencies)
        fractions = [(i + 1) / len(ordered) for i in range(len(ordered))]
        latency_ax.step(ordered, fractions, where="post", label=label)
    throughput_ax.set(
        title="throughput: pods bound (slope = pods/s)",
        xlabel="seconds since the measured phase started",
        ylabel="pods bound",
    )
    throughput_ax.set_xlim(left=0)
    throughput_ax.set_ylim(bottom=0)
    latency_ax.set(title="latency: creation -> bound", xlabel="seconds", ylabel="fraction of pods")
    for axes in (throughput_ax, latency_ax):
        axes.grid(alpha=0.3)
        axes.legend()
    figure.suptitle(title)
    figure.tight_layout()
    return figure


def write_report_png(path: Path, runs: Mapping[str, RunResult], *, title: str) -> None:
    figure = report_figure(runs, title=title)
    try:
        figure.savefig(path, dpi=100)
    finally:
        plt.close(figure)
