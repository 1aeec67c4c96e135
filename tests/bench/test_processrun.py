"""`draplane bench --processes` arithmetic: writes and conflicts from two scrapes of
`apiserver_request_total`, CPU and RSS per process, reading a process's usage from /proc, and
the message naming a component process that ended."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from prometheus_client import CollectorRegistry, Counter

from draplane.bench.processrun import (
    audit_between,
    requests_per_pod,
    usage_figures,
    watch_figures,
)
from draplane.controlplane.processes import ComponentExited
from draplane.controlplane.procstats import ProcessUsage, pid_alive, process_usage


@pytest.mark.parametrize(
    ("before", "after", "writes", "conflicts"),
    [
        pytest.param(
            {}, {("POST", "pods", "201"): 3.0}, {("create", "pods"): 3}, {}, id="first-scrape"
        ),
        pytest.param(
            {("PUT", "resourceclaims", "200"): 2.0},
            {("PUT", "resourceclaims", "200"): 5.0, ("PUT", "resourceclaims", "409"): 1.0},
            {("update", "resourceclaims"): 3},
            {("update", "resourceclaims"): 1},
            id="delta-and-conflict",
        ),
        pytest.param(
            {},
            {("GET", "pods", "200"): 9.0, ("WATCH", "pods", "200"): 2.0},
            {},
            {},
            id="reads-are-not-writes",
        ),
        pytest.param(
            {},
            {("PATCH", "pods", "200"): 1.0, ("DELETE", "pods", "404"): 4.0},
            {("patch", "pods"): 1},
            {},
            id="failed-writes-not-counted",
        ),
    ],
)
def test_audit_between_counts_successful_writes_and_conflicts(
    before: dict[tuple[str, str, str], float],
    after: dict[tuple[str, str, str], float],
    writes: dict[tuple[str, str], int],
    conflicts: dict[tuple[str, str], int],
) -> None:
    audit = audit_between(before, after)

    assert dict(audit.writes) == writes
    assert dict(audit.conflicts) == conflicts


@pytest.mark.parametrize(
    ("before", "after", "pods", "expected"),
    [
        pytest.param(
            {("GET", "pods", "200"): 4.0},
            {("GET", "pods", "200"): 14.0, ("GET", "pods", "404"): 5.0},
            10,
            {"GET pods": 1.5},
            id="reads-of-any-code-summed",
        ),
        pytest.param(
            {},
            {("WATCH", "pods", "200"): 1.0, ("POST", "events", "201"): 4.0},
            2,
            {"POST events": 2.0, "WATCH pods": 0.5},
            id="every-verb",
        ),
        pytest.param(
            {("PUT", "leases", "200"): 3.0}, {("PUT", "leases", "200"): 3.0}, 5, {}, id="unchanged"
        ),
        pytest.param({}, {("GET", "pods", "200"): 1.0}, 0, {}, id="no-pods"),
    ],
)
def test_requests_per_pod_counts_every_request_between_scrapes(
    before: dict[tuple[str, str, str], float],
    after: dict[tuple[str, str, str], float],
    pods: int,
    expected: dict[str, float],
) -> None:
    assert requests_per_pod(before, after, pods=pods) == expected


def test_usage_figures_per_process_and_total() -> None:
    before = {"apiserver": ProcessUsage(1.0, 100.0), "bench": ProcessUsage(0.5, 50.0)}
    after = {"apiserver": ProcessUsage(3.0, 150.0), "bench": ProcessUsage(1.5, 60.0)}

    figures = usage_figures(before, after, pods=10)

    assert figures["process_cpu_s"] == {"apiserver": 2.0, "bench": 1.0}
    assert figures["process_cpu_s_per_pod"] == {"apiserver": 0.2, "bench": 0.1}
    assert figures["process_peak_rss_mib"] == {"apiserver": 150.0, "bench": 60.0}
    assert (figures["cpu_s"], figures["cpu_s_per_pod"], figures["peak_rss_mib"]) == (
        3.0,
        0.3,
        210.0,
    )


def test_process_usage_of_a_running_and_of_a_gone_process() -> None:
    child = subprocess.Popen([sys.executable, "-c", "sum(range(10**6))"])
    child.wait()

    mine = process_usage(os.getpid())

    assert mine is not None
    assert mine.cpu_s > 0
    assert mine.peak_rss_mib > 1
    assert pid_alive(os.getpid())
    assert process_usage(child.pid) is None
    assert not pid_alive(child.pid)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        pytest.param(1, "component scheduler (pid 42) exited (1)", id="exit-code"),
        pytest.param(-9, "component scheduler (pid 42) was killed by SIGKILL", id="sigkill"),
        pytest.param(-99, "component scheduler (pid 42) was killed by signal 99", id="unknown"),
    ],
)
def test_component_exited_names_the_component_and_how(code: int, message: str) -> None:
    err = ComponentExited("scheduler", 42, code)

    assert (str(err), err.name, err.code) == (message, "scheduler", code)


def _sent_registry(events: dict[str, float], writes: dict[str, float]) -> CollectorRegistry:
    """An API server's scrape with these watch events and writes by resource."""
    registry = CollectorRegistry()
    sent = Counter("apiserver_watch_events", "", ["resource"], registry=registry)
    written = Counter("draplane_watch_writes", "", ["resource"], registry=registry)
    for resource, value in events.items():
        sent.labels(resource).inc(value)
    for resource, value in writes.items():
        written.labels(resource).inc(value)
    return registry


@pytest.mark.parametrize(
    ("before", "after", "pods", "expected"),
    [
        pytest.param(
            ({"pods": 10.0}, {"pods": 5.0}),
            ({"pods": 40.0, "resourceclaims": 20.0}, {"pods": 15.0, "resourceclaims": 5.0}),
            10,
            {"watch_events_per_pod": {"pods": 3.0, "resourceclaims": 2.0},
             "watch_events_per_pod_all": 5.0, "watch_events_per_write": 3.33},
            id="window-by-resource",
        ),
        pytest.param(
            ({"pods": 4.0}, {"pods": 4.0}),
            ({"pods": 4.0}, {"pods": 4.0}),
            10,
            {"watch_events_per_pod": {}, "watch_events_per_pod_all": 0.0,
             "watch_events_per_write": None},
            id="nothing-sent",
        ),
        pytest.param(
            ({}, {}),
            ({"nodes": 6.0}, {"nodes": 6.0}),
            0,
            {"watch_events_per_pod": {}, "watch_events_per_pod_all": None,
             "watch_events_per_write": 1.0},
            id="no-pods",
        ),
    ],
)  # fmt: skip
def test_watch_figures_from_two_scrapes(
    before: tuple[dict[str, float], dict[str, float]],
    after: tuple[dict[str, float], dict[str, float]],
    pods: int,
    expected: dict[str, object],
) -> None:
    figures = watch_figures(_sent_registry(*before), _sent_registry(*after), pods=pods)

    assert figures == expected
