"""Medians over runs and hints on/off ratios."""

from __future__ import annotations

from typing import Any

from draplane.bench.result import RESULT_KEYS, RunResult, median_figures, median_run, ratios


def _run(throughput: float, **extra: Any) -> dict[str, Any]:
    return {
        "workload": "basic", "hints": "on", "scheduled_pods": 10, "throughput_avg": throughput,
        "attempts_by_result": {"scheduled": 1.0}, "run": 1, **extra,
    }  # fmt: skip


def test_median_figures_takes_the_median_of_numbers_and_maps() -> None:
    runs = [
        _run(10.0, attempts_by_result={"scheduled": 1.0, "error": 0.5}),
        _run(30.0),
        _run(20.0),
    ]

    merged = median_figures(runs)

    assert merged["throughput_avg"] == 20.0
    assert merged["scheduled_pods"] == 10
    assert merged["attempts_by_result"] == {"error": 0.0, "scheduled": 1.0}
    assert merged["workload"] == "basic"
    assert merged["runs"] == 3
    assert "run" not in merged


def test_median_run_is_the_run_with_median_throughput() -> None:
    runs = [RunResult(_run(t), throughput_series=[int(t)]) for t in (5.0, 1.0, 3.0)]

    assert median_run(runs).throughput_series == [3]


def test_ratios_are_on_over_off_and_none_for_zero() -> None:
    on = {"throughput_avg": 100.0, "attempts_per_pod": 2.0, "latency_p50_s": 0.5}
    off = {"throughput_avg": 10.0, "attempts_per_pod": 4.0, "latency_p50_s": 0.0}

    found = ratios(on, off)

    assert found["throughput_avg"] == 10.0
    assert found["attempts_per_pod"] == 0.5
    assert found["latency_p50_s"] is None


def test_result_keys_are_the_contract() -> None:
    assert len(RESULT_KEYS) == len(set(RESULT_KEYS)) == 26
    assert RESULT_KEYS[0] == "workload"
    assert RESULT_KEYS[-1] == "cores"
