"""`ControllerContext`: what every controller is built from (kube-controller-manager's
ControllerContext).

The shared informers (read as the manager), the client each controller writes through, by
controller name (the ClientBuilder: in the manager, the controller's service account), the
clock, the metrics registry its queue and counters register in, the queues' rate limiter and
the workers per controller (the `--concurrent-*-syncs` flags). `ControllerManager` builds one
and hands it to every controller; `ControllerContext.of` is one whose controllers all write
through a single client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.client.ratelimit import RateLimiter
from draplane.clock import REAL_CLOCK, Clock

ClientFor = Callable[[str], Client]
"""The client a controller writes through, by controller name."""


@dataclass(frozen=True)
class ControllerContext:
    informers: InformerFactory
    """The shared informers; whoever builds the controllers starts them."""
    client_for: ClientFor
    clock: Clock = REAL_CLOCK
    metrics: CollectorRegistry | None = None
    """Where the work queues' and the controllers' metrics register (None: nowhere shared)."""
    rate_limiter: RateLimiter | None = None
    """The work queues' rate limiter; None is client-go's default."""
    workers: Mapping[str, int] = field(default_factory=dict)
    """Workers by controller name; a controller not named runs its default."""

    @classmethod
    def of(
        cls,
        client: Client,
        informers: InformerFactory,
        *,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> ControllerContext:
        """A context whose controllers all write through `client`."""
        return cls(
            informers,
            lambda _name: client,
            clock=clock,
            metrics=metrics,
            rate_limiter=rate_limiter,
        )
