"""`draplane.clock.jitter`: a period plus a random share of it, as wait.Jitter."""

from __future__ import annotations

import random

import pytest

from draplane.clock import jitter


@pytest.mark.parametrize(
    ("draw", "expected"),
    [(0.0, 10.0), (0.5, 10.2), (0.25, 10.1)],
)
def test_jitter_adds_the_drawn_share_of_the_factor(draw: float, expected: float) -> None:
    assert jitter(10.0, 0.04, uniform=lambda: draw) == pytest.approx(expected)


def test_jitter_stays_within_the_factor_and_spreads() -> None:
    rng = random.Random(7)
    periods = [jitter(10.0, 0.04, uniform=rng.random) for _ in range(1000)]

    assert all(10.0 <= p < 10.4 for p in periods)
    assert max(periods) - min(periods) > 0.3
