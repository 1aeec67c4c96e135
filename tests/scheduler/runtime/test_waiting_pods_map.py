"""Durations in Permit timeout messages are printed as Go's time.Duration prints them."""

from __future__ import annotations

import pytest

from draplane.scheduler.runtime.waiting_pods_map import go_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(0.000_000_5, "500ns", id="nanoseconds"),
        pytest.param(0.000_0015, "1.5µs", id="microseconds"),
        pytest.param(0.2, "200ms", id="milliseconds"),
        pytest.param(5, "5s", id="seconds"),
        pytest.param(1.5, "1.5s", id="fractional-seconds"),
        pytest.param(60, "1m0s", id="one-minute"),
        pytest.param(900, "15m0s", id="fifteen-minutes"),
        pytest.param(3723.5, "1h2m3.5s", id="hours"),
        pytest.param(-2, "-2s", id="negative"),
    ],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text
