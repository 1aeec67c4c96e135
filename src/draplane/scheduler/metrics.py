"""Scheduler metrics with kube-scheduler's names, on a caller-provided Prometheus registry.

Label children are cached so that hot paths pay one dict lookup and one `inc`/`observe`.
Pending-pod gauges are computed when scraped (`set_function`), at no cost per queue operation.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_ATTEMPT_BUCKETS = (
    0.0005,
    0.001,
    0.002,
    0.004,
    0.008,
    0.016,
    0.032,
    0.064,
    0.128,
    0.256,
    0.512,
    1.024,
    2.048,
    4.096,
    8.192,
)
_PLUGIN_BUCKETS = (
    0.00001,
    0.000015,
    0.0000225,
    0.00003375,
    0.00005,
    0.0001,
    0.0002,
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.022,
    0.05,
    0.1,
    0.22,
    0.5,
    1.0,
)


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None, *, profile: str = "") -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.profile = profile
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=self.registry,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_ATTEMPT_BUCKETS,
            registry=self.registry,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type.",
            ["queue"],
            registry=self.registry,
        )
        self.incoming_pods = Counter(
            "scheduler_queue_incoming_pods_total",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=self.registry,
        )
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=_PLUGIN_BUCKETS,
            registry=self.registry,
        )
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=_ATTEMPT_BUCKETS,
            registry=self.registry,
        )
        self.algorithm_cpu = Counter(
            "draplane_scheduler_scheduling_algorithm_cpu_seconds",
            "CPU seconds of this process's thread spent in the scheduling algorithm (Filter, "
            "Score); scheduler_scheduling_algorithm_duration_seconds counts the attempts",
            registry=self.registry,
        )
        self._incoming: dict[tuple[str, str], Counter] = {}

    def observe_attempt(self, result: str, seconds: float) -> None:
        """`result` is scheduled, unschedulable or error."""
        self.schedule_attempts.labels(result, self.profile).inc()
        self.attempt_duration.labels(result, self.profile).observe(seconds)

    def observe_algorithm(self, *, seconds: float, cpu_seconds: float) -> None:
        self.algorithm_duration.observe(seconds)
        self.algorithm_cpu.inc(cpu_seconds)

    def queue_incoming(self, queue: str, event: str) -> None:
        child = self._incoming.get((queue, event))
        if child is None:
            child = self._incoming[(queue, event)] = self.incoming_pods.labels(queue, event)
        child.inc()

    def observe_plugin(
        self, *, plugin: str, extension_point: str, status: str, seconds: float
    ) -> None:
        self.plugin_duration.labels(plugin, extension_point, status).observe(seconds)

    def watch_pending(self, counts: Callable[[], dict[str, int]]) -> None:
        """Serve scheduler_pending_pods{queue} from `counts()` at scrape time."""
        for queue in ("active", "backoff", "unschedulable", "gated"):
            self.pending_pods.labels(queue).set_function(
                lambda queue=queue: float(counts().get(queue, 0))  # type: ignore[misc]
            )
