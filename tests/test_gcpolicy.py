"""`draplane.gcpolicy`: every collection is timed by generation and exported as a histogram."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from draplane import gcpolicy
from draplane.metrics import component_registry


@pytest.fixture
def pauses() -> Iterator[gcpolicy.GcPauses]:
    recorder = gcpolicy.GcPauses()
    recorder.install()
    yield recorder
    recorder.uninstall()


@pytest.mark.parametrize("generation", [0, 1, 2])
def test_each_collection_is_counted_under_its_generation(
    pauses: gcpolicy.GcPauses, generation: int
) -> None:
    before = [p.count for p in pauses.generations]
    gc.collect(generation)
    after = [p.count for p in pauses.generations]

    assert after[generation] >= before[generation] + 1
    figures = pauses.figures()
    assert figures[f"gc_gen{generation}_collections"] == after[generation]
    assert figures[f"gc_gen{generation}_max_ms"] <= figures[f"gc_gen{generation}_total_ms"]


def test_uninstalled_recorder_counts_nothing() -> None:
    recorder = gcpolicy.GcPauses()
    was_enabled = gc.isenabled()
    gc.disable()  # only the explicit collections below run, none of the interpreter's own
    try:
        recorder.install()
        recorder.install()  # once only
        gc.collect()
        assert recorder.generations[2].count == 1
        recorder.uninstall()
        gc.collect()
    finally:
        recorder.uninstall()
        if was_enabled:
            gc.enable()

    assert recorder.generations[2].count == 1


@pytest.mark.parametrize(
    ("seconds", "bucket"),
    [(0.0005, "0.001"), (0.001, "0.001"), (0.3, "0.5"), (60.0, "+Inf")],
)
def test_pauses_are_exported_as_a_cumulative_histogram(seconds: float, bucket: str) -> None:
    recorder = gcpolicy.GcPauses()
    recorder.generations[1].add(seconds)
    registry = CollectorRegistry()
    registry.register(recorder)

    samples = {
        (s.name, s.labels.get("generation"), s.labels.get("le")): s.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples
    }

    bounds = [repr(b) for b in gcpolicy.PAUSE_BUCKETS] + ["+Inf"]
    counts = [samples[("draplane_gc_pause_seconds_bucket", "1", b)] for b in bounds]
    first = bounds.index(bucket)
    assert counts == [0.0] * first + [1.0] * (len(bounds) - first)
    assert samples[("draplane_gc_pause_seconds_count", "1", None)] == 1.0
    assert samples[("draplane_gc_pause_seconds_sum", "1", None)] == pytest.approx(seconds)
    assert samples[("draplane_gc_pause_seconds_count", "0", None)] == 0.0


def test_component_registry_serves_the_process_pauses() -> None:
    text = generate_latest(component_registry()).decode()

    assert 'draplane_gc_pause_seconds_count{generation="2"}' in text
