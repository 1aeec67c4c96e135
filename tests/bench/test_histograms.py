"""Window quantiles and per-label snapshots of Prometheus histograms, on real
prometheus_client registries."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Histogram

from draplane.bench.histograms import HistogramSnapshot, duration_figures, histogram_quantile

BOUNDS = (1.0, 2.0, 4.0)


def _snapshot(counts: list[float], *, total: float = 0.0) -> HistogramSnapshot:
    cumulative = dict(zip((*BOUNDS, float("inf")), counts, strict=True))
    return HistogramSnapshot(cumulative, total=total, count=counts[-1])


def make_registry(observations: dict[tuple[str, str], list[float]]) -> CollectorRegistry:
    """A registry with `request_seconds{verb,resource}` holding `observations` per label pair."""
    registry = CollectorRegistry()
    histogram = Histogram(
        "request_seconds", "test", ["verb", "resource"], buckets=BOUNDS, registry=registry
    )
    for (verb, resource), values in observations.items():
        for value in values:
            histogram.labels(verb, resource).observe(value)
    return registry


@pytest.mark.parametrize(
    ("q", "after", "before", "expected"),
    [
        pytest.param(0.5, [10, 10, 10, 10], [0, 0, 0, 0], 0.5, id="all-in-first-bucket"),
        pytest.param(0.5, [0, 10, 10, 10], [0, 0, 0, 0], 1.5, id="interpolated-in-second"),
        pytest.param(0.5, [10, 20, 20, 20], [10, 10, 10, 10], 1.5, id="window-only"),
        pytest.param(0.99, [0, 0, 0, 10], [0, 0, 0, 0], 4.0, id="inf-bucket-last-bound"),
        pytest.param(0.5, [5, 5, 5, 5], [5, 5, 5, 5], None, id="no-observations"),
    ],
)
def test_histogram_quantile(
    q: float, after: list[float], before: list[float], expected: float | None
) -> None:
    assert histogram_quantile(q, after=_snapshot(after), before=_snapshot(before)) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        pytest.param(
            "verb",
            {"POST": (3, 0.5 + 1.5 + 3.0), "GET": (1, 0.25)},
            id="per-verb-summed-over-resources",
        ),
        pytest.param("", {"": (4, 5.25)}, id="everything"),
        pytest.param("missing", {"": (4, 5.25)}, id="absent-label-is-empty-value"),
    ],
)
def test_by_label_splits_on_one_label_and_sums_the_rest(
    label: str, expected: dict[str, tuple[int, float]]
) -> None:
    registry = make_registry(
        {("POST", "pods"): [0.5, 1.5], ("POST", "leases"): [3.0], ("GET", "pods"): [0.25]}
    )

    snapshots = HistogramSnapshot.by_label(registry, name="request_seconds", label=label)

    assert {k: (int(s.count), s.total) for k, s in snapshots.items()} == expected


def test_by_label_buckets_are_cumulative_per_value() -> None:
    registry = make_registry({("POST", "pods"): [0.5, 1.5], ("POST", "leases"): [3.0]})

    post = HistogramSnapshot.by_label(registry, name="request_seconds", label="verb")["POST"]

    assert post.buckets == {1.0: 1, 2.0: 2, 4.0: 3, float("inf"): 3}


def test_take_of_an_absent_histogram_is_empty() -> None:
    registry = make_registry({})

    assert HistogramSnapshot.take(registry, name="other_seconds") == HistogramSnapshot()


def test_combined_adds_series_and_minus_leaves_the_window() -> None:
    first, second = _snapshot([1, 2, 2, 2], total=2.0), _snapshot([0, 0, 1, 3], total=9.0)

    both = HistogramSnapshot.combined([first, second])
    window = both.minus(first)

    assert (both.buckets[4.0], both.count, both.total) == (3, 5, 11.0)
    assert window == second


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        pytest.param([2, 2, 2, 2], 1.0, id="all-in-first"),
        pytest.param([0, 1, 3, 3], 4.0, id="longest-in-last-finite"),
        pytest.param([0, 0, 0, 1], None, id="beyond-the-buckets"),
        pytest.param([0, 0, 0, 0], None, id="none"),
    ],
)
def test_bound_of_all(counts: list[float], expected: float | None) -> None:
    assert _snapshot(counts).bound_of_all() == expected


@pytest.mark.parametrize(
    ("after", "before", "expected"),
    [
        pytest.param(
            _snapshot([4, 4, 4, 4], total=2.0),
            HistogramSnapshot(),
            {"x_mean_ms": 500.0, "x_p50_ms": 500.0, "x_p99_ms": 990.0},
            id="window-from-empty",
        ),
        pytest.param(
            _snapshot([4, 4, 4, 4], total=2.0),
            _snapshot([4, 4, 4, 4], total=2.0),
            {"x_mean_ms": None, "x_p50_ms": None, "x_p99_ms": None},
            id="nothing-observed",
        ),
    ],
)
def test_duration_figures_name_their_prefix(
    after: HistogramSnapshot, before: HistogramSnapshot, expected: dict[str, float | None]
) -> None:
    assert duration_figures(after=after, before=before, prefix="x") == expected
