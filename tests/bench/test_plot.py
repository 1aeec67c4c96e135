"""report.png's throughput panel draws every run, however short: pods bound over time, one
line per hints mode, labelled with the run's average throughput (the table's figure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.bench.plot import report_figure, write_report_png
from draplane.bench.result import RunResult


def run(offsets: list[float], average: float) -> RunResult:
    return RunResult(
        figures={"throughput_avg": average},
        throughput_series=[len(offsets)],
        latencies=[0.1] * len(offsets),
        bind_offsets=offsets,
    )


RUNS = {
    # Both runs end inside the first 1 s window: one window each, which drew no line.
    "hints on": run([0.05, 0.1, 0.1, 0.3], 13.33),
    "hints off": run([0.2, 0.4, 0.6], 5.0),
}


def test_throughput_panel_draws_each_run_as_pods_bound_over_time() -> None:
    figure = report_figure(RUNS, title="basic (small)")
    throughput = figure.axes[0]
    lines = {line.get_label(): line for line in throughput.get_lines()}
    assert sorted(lines) == ["hints off: 5 pods/s avg", "hints on: 13.33 pods/s avg"]
    on = lines["hints on: 13.33 pods/s avg"]
    assert list(on.get_xdata()) == [0.0, 0.05, 0.1, 0.1, 0.3]
    assert list(on.get_ydata()) == [0, 1, 2, 3, 4]
    off = lines["hints off: 5 pods/s avg"]
    assert (list(off.get_xdata())[-1], list(off.get_ydata())[-1]) == (0.6, 3)
    assert throughput.get_xlim()[0] == 0


@pytest.mark.parametrize(
    "runs",
    [pytest.param(RUNS, id="compare"), pytest.param({"hints on": run([], 0.0)}, id="no-binds")],
)
def test_report_png_is_written(tmp_path: Path, runs: dict[str, RunResult]) -> None:
    path = tmp_path / "report.png"
    write_report_png(path, runs, title="basic (small)")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
