"""`LoopLag`: the event loop's lag histogram, observed by hand and probed on a real loop."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from draplane.looplag import METRIC, LoopLag
from draplane.testing.apistate import wait_for


def make_registry(probe: LoopLag) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(probe.histogram)
    return registry


def probes(registry: CollectorRegistry) -> float:
    return registry.get_sample_value(f"{METRIC}_count") or 0.0


@pytest.mark.parametrize(
    ("lags", "bucket", "expected"),
    [
        pytest.param([0.0005, 0.003, 0.2], "0.005", 2, id="cumulative"),
        pytest.param([0.0005, 0.003, 0.2], "+Inf", 3, id="all-in-inf"),
        pytest.param([-0.001], "0.001", 1, id="early-counts-as-none"),
        pytest.param([7.0], "5.0", 0, id="beyond-buckets"),
    ],
)
def test_observed_lags_are_exported_as_a_histogram(
    lags: list[float], bucket: str, expected: int
) -> None:
    probe = LoopLag()
    for lag in lags:
        probe.observe(lag)
    registry = make_registry(probe)

    assert registry.get_sample_value(f"{METRIC}_bucket", {"le": bucket}) == expected
    assert registry.get_sample_value(f"{METRIC}_count") == len(lags)
    assert registry.get_sample_value(f"{METRIC}_sum") == pytest.approx(sum(max(x, 0) for x in lags))


async def test_the_probe_runs_on_the_loop_until_stopped() -> None:
    probe = LoopLag(interval=0.001)
    registry = make_registry(probe)
    probe.start()
    probe.start()  # a second start keeps one probe
    await wait_for(lambda: probes(registry) >= 3)
    probe.stop()

    assert not probe.running
    observed = probes(registry)
    assert registry.get_sample_value(f"{METRIC}_bucket", {"le": "+Inf"}) == observed
    probe._probe(0.0)  # a probe already due when stopped observes nothing
    assert (probes(registry), probe.running) == (observed, False)
