"""Python's cyclic garbage collector as a control plane process runs it: the thresholds every
command sets and the pauses each collection costs.

A control plane keeps hundreds of thousands of long-lived container objects (stored and cached
API objects, informer indexes). The collector traverses every object of the generations it
collects with the event loop stopped, so each collection is a pause in which no request is
answered.

- `GC_THRESHOLDS`: a first threshold of 50,000 allocations instead of 700, so the older
  generations, and the full collections above all, run rarely (docs/benchmarks-history.md
  measures it against the default and against smaller first thresholds); generation 1 is kept
  small, so that no collection of it is a long pause ("2026-12-03 (evening), density at 2,000
  nodes: generation 1 kept small").
- `GcPauses`: a `gc.callbacks` hook that times each collection by generation, exported as
  `draplane_gc_pause_seconds` on /metrics (where Go components have go_gc_duration_seconds)
  and read by the benchmarks.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector

GC_THRESHOLDS = (50_000, 0, 1000)
"""gc.set_threshold for every command: (generation 0 allocations, generation 1 and 2 counts).
A second threshold of 0 collects generation 1 at every other young collection, so it never
holds more than one young collection's survivors (with 20 it gathered twenty, and collecting
them paused a 2,000-node API server for up to a second); the third keeps full collections as
rare as before (one per ~2,000 young collections)."""

PAUSE_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class GenerationPauses:
    """The collections of one generation: how many, their seconds in all, the longest, and
    how many fell in each of PAUSE_BUCKETS (cumulative counts are built on export)."""

    count: int = 0
    collected: int = 0
    """Unreachable objects the collections freed (cyclic garbage)."""
    total_s: float = 0.0
    max_s: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * len(PAUSE_BUCKETS))

    def add(self, seconds: float, *, collected: int = 0) -> None:
        self.count += 1
        self.collected += collected
        self.total_s += seconds
        self.max_s = max(self.max_s, seconds)
        for i, bound in enumerate(PAUSE_BUCKETS):
            if seconds <= bound:
                self.buckets[i] += 1
                break


class GcPauses(Collector):
    """Times every collection of this process while installed (`PAUSES` for the whole
    process; a benchmark installs one of its own for its measured phase)."""

    def __init__(self) -> None:
        self.generations = [GenerationPauses() for _ in range(3)]
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.generations[info["generation"]].add(
                time.perf_counter() - self._started, collected=info["collected"]
            )

    def install(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def uninstall(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def figures(self) -> dict[str, Any]:
        """Per generation: collections, objects they freed, total and longest pause (ms); and
        the pauses of all generations in all (ms)."""
        out: dict[str, Any] = {
            "gc_total_ms": round(1000 * sum(p.total_s for p in self.generations), 1)
        }
        for generation, pauses in enumerate(self.generations):
            out[f"gc_gen{generation}_collections"] = pauses.count
            out[f"gc_gen{generation}_collected"] = pauses.collected
            out[f"gc_gen{generation}_total_ms"] = round(1000 * pauses.total_s, 1)
            out[f"gc_gen{generation}_max_ms"] = round(1000 * pauses.max_s, 1)
        return out

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(
            "draplane_gc_pause_seconds",
            "Pauses of Python's cyclic garbage collector, by generation collected.",
            labels=["generation"],
        )
        for generation, pauses in enumerate(self.generations):
            cumulative, running = [], 0
            for bound, n in zip(PAUSE_BUCKETS, pauses.buckets, strict=True):
                running += n
                cumulative.append((repr(bound), running))
            cumulative.append(("+Inf", pauses.count))
            family.add_metric([str(generation)], cumulative, pauses.total_s)
        yield family


PAUSES = GcPauses()
"""This process's collector pauses (one `gc.callbacks` hook per process)."""


def configure() -> None:
    """Every command's start: the thresholds and the pause timer."""
    gc.set_threshold(*GC_THRESHOLDS)
    PAUSES.install()


def register(registry: CollectorRegistry) -> None:
    """Serve this process's pauses on `registry` (a component's /metrics)."""
    registry.register(PAUSES)
