"""Reading a Prometheus text exposition (a /metrics body) in tests."""

from __future__ import annotations

# What every Kubernetes component's /metrics carries besides its own metrics (the process
# collector of k8s.io/component-base/metrics/legacyregistry; python_info as Go's go_info, the
# cyclic collector's pauses as Go's go_gc_duration_seconds).
PROCESS_SERIES = frozenset(
    {
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_start_time_seconds",
        "process_open_fds",
        "python_info",
        "draplane_gc_pause_seconds_count",
    }
)


def series_names(text: str) -> set[str]:
    """The metric name of every sample line."""
    names = set()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            names.add(line.split("{", 1)[0].split(" ", 1)[0])
    return names


def check_component_exposition(text: str) -> None:
    """Assert `text` is shaped as a Kubernetes component's: the process series, no `_created`."""
    names = series_names(text)
    assert sorted(n for n in names if n.endswith("_created")) == []
    assert sorted(PROCESS_SERIES - names) == []
