"""The resource claim controller's Prometheus counters (workqueue metrics come from the queue)."""

from __future__ import annotations

import weakref

from prometheus_client import CollectorRegistry, Counter

_BY_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, tuple[Counter, Counter]] = (
    weakref.WeakKeyDictionary()
)


class ResourceClaimMetrics:
    """`resourceclaim_controller_create_{attempts,failures}_total` on one registry.

    Controllers sharing a registry (a restarted controller) share the counters. With no
    registry they live in a private one, so they still count (tests read them).
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        counters = _BY_REGISTRY.get(self.registry)
        if counters is None:
            counters = (
                Counter(
                    "resourceclaim_controller_create_attempts",
                    "Number of ResourceClaims creation requests",
                    registry=self.registry,
                ),
                Counter(
                    "resourceclaim_controller_create_failures",
                    "Number of ResourceClaims creation request failures",
                    registry=self.registry,
                ),
            )
            _BY_REGISTRY[self.registry] = counters
        self.create_attempts, self.create_failures = counters
