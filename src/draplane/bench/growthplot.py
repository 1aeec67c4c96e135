"""`growth.png`: a node sweep's cost curves. Left: the scheduler's algorithm CPU per attempt
(ms) and, on a second axis, the nodes the adaptive percentageOfNodesToScore examines, both
against the cluster's nodes, so that a per-attempt cost growing faster than the nodes examined
shows as the two lines parting. Right: the whole process's CPU per pod (ms) and the throughput.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def _series(curve: Sequence[Mapping[str, Any]], key: str, *, scale: float = 1.0) -> list[float]:
    return [float(point.get(key) or 0.0) * scale for point in curve]


def growth_figure(curve: Sequence[Mapping[str, Any]], *, title: str) -> Figure:
    nodes = _series(curve, "nodes")
    figure, (attempt_ax, pod_ax) = plt.subplots(1, 2, figsize=(12, 4.5))
    attempt_ax.plot(
        nodes, _series(curve, "algorithm_cpu_ms_per_attempt"), "o-",
        color="tab:blue", label="algorithm CPU per attempt (ms)",
    )  # fmt: skip
    attempt_ax.set(
        title="scheduler: cost per attempt",
        xlabel="nodes",
        ylabel="ms per attempt (Filter + Score)",
    )
    examined_ax = attempt_ax.twinx()
    examined_ax.plot(
        nodes, _series(curve, "nodes_to_find"), "s--",
        color="tab:orange", label="nodes examined (adaptive percentageOfNodesToScore)",
    )  # fmt: skip
    examined_ax.set_ylabel("nodes examined per attempt")
    attempt_ax.set_ylim(bottom=0)
    examined_ax.set_ylim(bottom=0)
    lines = attempt_ax.get_legend_handles_labels()
    more = examined_ax.get_legend_handles_labels()
    attempt_ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left")
    pod_ax.plot(
        nodes, _series(curve, "cpu_s_per_pod", scale=1000.0), "o-",
        color="tab:green", label="CPU per pod (ms, whole process)",
    )  # fmt: skip
    pod_ax.set(title="whole control plane: cost per pod", xlabel="nodes", ylabel="ms per pod")
    pod_ax.set_ylim(bottom=0)
    throughput_ax = pod_ax.twinx()
    throughput_ax.plot(
        nodes, _series(curve, "throughput_avg"), "^:", color="tab:red", label="pods/s (avg)"
    )
    throughput_ax.set_ylabel("pods bound per s")
    throughput_ax.set_ylim(bottom=0)
    lines = pod_ax.get_legend_handles_labels()
    more = throughput_ax.get_legend_handles_labels()
    pod_ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left")
    for axes in (attempt_ax, pod_ax):
        axes.grid(alpha=0.3)
    figure.suptitle(title)
    figure.tight_layout()
    return figure


def write_growth_png(path: Path, curve: Sequence[Mapping[str, Any]], *, title: str) -> None:
    figure = growth_figure(curve, title=title)
    try:
        figure.savefig(path, dpi=100)
    finally:
        plt.close(figure)
