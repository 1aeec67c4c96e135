"""`ControllerManager`: runs the resource claim controller, garbage collector, namespace
controller, service account controller, ClusterRole aggregation controller, the Deployment,
ReplicaSet, StatefulSet and DaemonSet controllers, and the Job, CronJob and
TTL-after-finished controllers in one asyncio loop, like kube-controller-manager with
`--use-service-account-credentials`.

The shared informers read as the manager's own user (`system:kube-controller-manager`, which may
list and watch everything); each controller writes through its own client, as its service
account `system:serviceaccount:kube-system:<controller>`, so each holds only its
`system:controller:<controller>` role. The manager builds one `ControllerContext` (the shared
informers, each controller's client by name, the clock, the metrics registry) and hands it to
every controller.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.controllers.clusterroleaggregation import ClusterRoleAggregationController
from draplane.controllers.context import ClientFor, ControllerContext
from draplane.controllers.cronjob import CronJobController
from draplane.controllers.daemonset import DaemonSetController
from draplane.controllers.deployment import DeploymentController
from draplane.controllers.garbagecollector import GarbageCollector
from draplane.controllers.job import JobController
from draplane.controllers.namespace import NamespaceController
from draplane.controllers.replicaset import ReplicaSetController
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.controllers.serviceaccounts import ServiceAccountsController
from draplane.controllers.statefulset import StatefulSetController
from draplane.controllers.ttlafterfinished import TTLAfterFinishedController


class _Runnable(Protocol):
    async def run(self) -> None: ...


log = logging.getLogger(__name__)

_CLASSES = (
    ResourceClaimController,
    GarbageCollector,
    NamespaceController,
    ServiceAccountsController,
    ClusterRoleAggregationController,
    StatefulSetController,
    DaemonSetController,
    JobController,
    CronJobController,
    TTLAfterFinishedController,
    DeploymentController,
    ReplicaSetController,
)
CONTROLLERS = tuple(cls.NAME for cls in _CLASSES)
"""The controllers' names, which are also their service accounts in kube-system."""


class ControllerManager:
    def __init__(
        self,
        client: Client,
        *,
        client_for: ClientFor | None = None,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
        mode: versions.Mode,
    ) -> None:
        """`mode`: the Kubernetes version served (1.36: the resource claim controller on
        resource.k8s.io/v1)."""
        self._informers = InformerFactory(client, clock=clock)
        ctx = ControllerContext(
            self._informers,
            client_for or (lambda _name: client),
            clock=clock,
            metrics=metrics,
        )
        self.resource_claim_controller = ResourceClaimController(ctx, mode=mode)
        stored = mode.stored
        self.garbage_collector = GarbageCollector(ctx, resources=stored)
        self.namespace_controller = NamespaceController(ctx, resources=stored)
        self.service_account_controller = ServiceAccountsController(ctx)
        self.clusterrole_aggregation_controller = ClusterRoleAggregationController(ctx)
        self.statefulset_controller = StatefulSetController(ctx)
        self.daemonset_controller = DaemonSetController(ctx)
        self.job_controller = JobController(ctx)
        self.cronjob_controller = CronJobController(ctx)
        self.ttl_after_finished_controller = TTLAfterFinishedController(ctx)
        self.deployment_controller = DeploymentController(ctx)
        self.replicaset_controller = ReplicaSetController(ctx)
        self._controllers: tuple[_Runnable, ...] = (
            self.resource_claim_controller,
            self.garbage_collector,
            self.namespace_controller,
            self.service_account_controller,
            self.clusterrole_aggregation_controller,
            self.statefulset_controller,
            self.daemonset_controller,
            self.job_controller,
            self.cronjob_controller,
            self.ttl_after_finished_controller,
            self.deployment_controller,
            self.replicaset_controller,
        )

    def has_synced(self) -> bool:
        return self._informers.has_synced()

    async def run(self) -> None:
        """Run every controller until cancelled."""
        await self._informers.start()
        try:
            async with asyncio.TaskGroup() as group:
                for controller in self._controllers:
                    group.create_task(controller.run())
        finally:
            await self._informers.stop()
