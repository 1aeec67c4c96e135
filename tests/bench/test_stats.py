"""Percentiles, throughput windows and Prometheus counter deltas."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter

from draplane.bench.stats import (
    counter_by_label,
    cumulative_binds,
    delta,
    per_pod,
    percentile,
    throughput_samples,
    throughput_series,
)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        pytest.param([], 50, 0.0, id="empty"),
        pytest.param([3.0], 99, 3.0, id="single"),
        pytest.param([1.0, 2.0, 3.0, 4.0], 50, 2.5, id="median-interpolated"),
        pytest.param([4.0, 1.0, 3.0, 2.0], 100, 4.0, id="max-unsorted"),
        pytest.param([0.0, 10.0], 90, 9.0, id="p90"),
    ],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_throughput_series_counts_binds_per_second_from_start() -> None:
    series = throughput_series([10.1, 10.2, 11.5, 13.9], start=10.0)

    assert series == [2, 1, 0, 1]


def test_throughput_series_of_nothing_is_empty() -> None:
    assert throughput_series([], start=5.0) == []


@pytest.mark.parametrize(
    ("offsets", "expected"),
    [
        pytest.param([], ([0.0], [0]), id="nothing-bound"),
        pytest.param([0.3, 0.1, 0.1], ([0.0, 0.1, 0.1, 0.3], [0, 1, 2, 3]), id="sub-second"),
        pytest.param([-0.01, 2.5], ([0.0, 0.0, 2.5], [0, 1, 2]), id="bound-at-the-start"),
    ],
)
def test_cumulative_binds_start_at_zero_and_count_each_binding(
    offsets: list[float], expected: tuple[list[float], list[int]]
) -> None:
    assert cumulative_binds(offsets) == expected


@pytest.mark.parametrize(
    ("series", "duration", "expected"),
    [
        pytest.param([5, 5, 2], 2.5, [5.0, 5.0, 4.0], id="half-second-tail-counts-as-rate"),
        pytest.param([5, 5, 1], 2.2, [5.0, 5.0], id="short-tail-dropped"),
        pytest.param([40], 0.4, [100.0], id="shorter-than-a-window"),
    ],
)
def test_throughput_samples(series: list[int], duration: float, expected: list[float]) -> None:
    assert throughput_samples(series, duration=duration) == pytest.approx(expected)


def test_counter_by_label_sums_over_other_labels_and_deltas() -> None:
    registry = CollectorRegistry()
    attempts = Counter("scheduler_schedule_attempts", "", ["result", "profile"], registry=registry)
    attempts.labels("scheduled", "a").inc(2)
    attempts.labels("scheduled", "b").inc(1)
    before = counter_by_label(registry, name="scheduler_schedule_attempts_total", label="result")
    attempts.labels("unschedulable", "a").inc(4)

    after = counter_by_label(registry, name="scheduler_schedule_attempts_total", label="result")

    assert before == {"scheduled": 3.0}
    assert delta(after, before) == {"scheduled": 0.0, "unschedulable": 4.0}
    assert per_pod(after, 2) == {"scheduled": 1.5, "unschedulable": 2.0}
