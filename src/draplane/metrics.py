"""`component_registry()`: the Prometheus registry a draplane component serves on /metrics.

Shaped as a Kubernetes component's (k8s.io/component-base/metrics/legacyregistry registers the
process collector and Go's runtime collector in every component): `process_*` series, and the
platform's `python_info` where Go components have `go_info`. Kubernetes components expose no
`*_created` series (OpenMetrics created timestamps), so those are turned off: the switch is
process-wide in prometheus_client, and every draplane process is a Kubernetes component.
Where Go components export `go_gc_duration_seconds`, draplane exports the pauses of Python's
cyclic collector (`draplane_gc_pause_seconds`, `draplane.gcpolicy`), and how late its event
loop runs what is due (`draplane_event_loop_lag_seconds`, `draplane.looplag`; probing starts
with the component's run, `draplane.cli.process.stop_on_signals`).
"""

from __future__ import annotations

import prometheus_client
from prometheus_client import CollectorRegistry

from draplane import gcpolicy, looplag


def component_registry() -> CollectorRegistry:
    prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
    registry = CollectorRegistry()
    prometheus_client.ProcessCollector(registry=registry)
    prometheus_client.PlatformCollector(registry=registry)
    gcpolicy.register(registry)
    looplag.register(registry)
    return registry
