"""`ControllerManager`: runs the resource claim controller, garbage collector and namespace
controller in one asyncio loop, like kube-controller-manager.

The resource claim controller acts through its own client (its own user, as upstream's service
account); the others share the manager's client and its informers.
"""

from __future__ import annotations

import asyncio
import logging

from prometheus_client import CollectorRegistry

from draplane.client.events import EventRecorder
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.controllers.garbagecollector import GarbageCollector
from draplane.controllers.namespace import NamespaceController
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.controllers.resourceclaim_context import EVENT_COMPONENT

log = logging.getLogger(__name__)


class ControllerManager:
    def __init__(
        self,
        client: Client,
        *,
        claim_controller_client: Client | None = None,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
    ) -> None:
        self._informers = InformerFactory(client, clock=clock)
        if claim_controller_client is None or claim_controller_client is client:
            claim_client, self._claim_informers = client, self._informers
        else:
            claim_client = claim_controller_client
            self._claim_informers = InformerFactory(claim_client, clock=clock)
        self.resource_claim_controller = ResourceClaimController(
            claim_client,
            informers=self._claim_informers,
            recorder=EventRecorder(claim_client, EVENT_COMPONENT, clock=clock),
            clock=clock,
            metrics=metrics,
        )
        self.garbage_collector = GarbageCollector(
            client, informers=self._informers, clock=clock, metrics=metrics
        )
        self.namespace_controller = NamespaceController(
            client, informers=self._informers, clock=clock, metrics=metrics
        )

    def _factories(self) -> list[InformerFactory]:
        if self._claim_informers is self._informers:
            return [self._informers]
        return [self._informers, self._claim_informers]

    def has_synced(self) -> bool:
        return all(factory.has_synced() for factory in self._factories())

    async def run(self) -> None:
        """Run every controller until cancelled."""
        for factory in self._factories():
            await factory.start()
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.resource_claim_controller.run())
                group.create_task(self.garbage_collector.run())
                group.create_task(self.namespace_controller.run())
        finally:
            for factory in self._factories():
                await factory.stop()
