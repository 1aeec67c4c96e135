"""`ControllerManager`: runs the resource claim controller, garbage collector, namespace
controller, service account controller, ClusterRole aggregation controller, the Deployment,
ReplicaSet, StatefulSet and DaemonSet controllers, and the Job, CronJob and
TTL-after-finished controllers in one asyncio loop, like kube-controller-manager with
`--use-service-account-credentials`.

The shared informers read as the manager's own user (`system:kube-controller-manager`, which may
list and watch everything); each controller writes through its own client, as its service
account `system:serviceaccount:kube-system:<controller>`, so each holds only its
`system:controller:<controller>` role.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol, TypeVar

from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.client.events import EventRecorder
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.controllers.clusterroleaggregation import ClusterRoleAggregationController
from draplane.controllers.cronjob import CronJobController
from draplane.controllers.daemonset import DaemonSetController
from draplane.controllers.deployment import DeploymentController
from draplane.controllers.garbagecollector import GarbageCollector
from draplane.controllers.job import JobController
from draplane.controllers.namespace import NamespaceController
from draplane.controllers.replicaset import ReplicaSetController
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.controllers.resourceclaim_context import EVENT_COMPONENT
from draplane.controllers.serviceaccounts import ServiceAccountsController
from draplane.controllers.statefulset import StatefulSetController
from draplane.controllers.ttlafterfinished import TTLAfterFinishedController

_W = TypeVar("_W")


class _Runnable(Protocol):
    async def run(self) -> None: ...


log = logging.getLogger(__name__)

RESOURCE_CLAIM_CONTROLLER = "resource-claim-controller"
GARBAGE_COLLECTOR = "generic-garbage-collector"
NAMESPACE_CONTROLLER = "namespace-controller"
SERVICE_ACCOUNT_CONTROLLER = "service-account-controller"
CLUSTERROLE_AGGREGATION_CONTROLLER = "clusterrole-aggregation-controller"
STATEFULSET_CONTROLLER = "statefulset-controller"
DAEMONSET_CONTROLLER = "daemon-set-controller"
JOB_CONTROLLER = "job-controller"
CRONJOB_CONTROLLER = "cronjob-controller"
TTL_AFTER_FINISHED_CONTROLLER = "ttl-after-finished-controller"
DEPLOYMENT_CONTROLLER = "deployment-controller"
REPLICASET_CONTROLLER = "replicaset-controller"
CONTROLLERS = (
    RESOURCE_CLAIM_CONTROLLER,
    GARBAGE_COLLECTOR,
    NAMESPACE_CONTROLLER,
    SERVICE_ACCOUNT_CONTROLLER,
    CLUSTERROLE_AGGREGATION_CONTROLLER,
    STATEFULSET_CONTROLLER,
    DAEMONSET_CONTROLLER,
    JOB_CONTROLLER,
    CRONJOB_CONTROLLER,
    TTL_AFTER_FINISHED_CONTROLLER,
    DEPLOYMENT_CONTROLLER,
    REPLICASET_CONTROLLER,
)
"""The controllers' names, which are also their service accounts in kube-system."""

ClientFor = Callable[[str], Client]
"""The client a controller writes through, by controller name."""


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

        def writer(name: str) -> Client:
            return client if client_for is None else client_for(name)

        claim_client = writer(RESOURCE_CLAIM_CONTROLLER)
        self.resource_claim_controller = ResourceClaimController(
            claim_client,
            informers=self._informers,
            recorder=EventRecorder(claim_client, EVENT_COMPONENT, clock=clock),
            clock=clock,
            metrics=metrics,
            structured=mode.structured,
        )
        stored = mode.stored
        self.garbage_collector = GarbageCollector(
            writer(GARBAGE_COLLECTOR),
            informers=self._informers,
            clock=clock,
            metrics=metrics,
            resources=stored,
        )
        self.namespace_controller = NamespaceController(
            writer(NAMESPACE_CONTROLLER),
            informers=self._informers,
            clock=clock,
            metrics=metrics,
            resources=stored,
        )
        self.service_account_controller = ServiceAccountsController(
            writer(SERVICE_ACCOUNT_CONTROLLER),
            informers=self._informers,
            clock=clock,
            metrics=metrics,
        )
        self.clusterrole_aggregation_controller = ClusterRoleAggregationController(
            writer(CLUSTERROLE_AGGREGATION_CONTROLLER),
            informers=self._informers,
            clock=clock,
            metrics=metrics,
        )

        def workload(cls: Callable[..., _W], name: str, component: str = "") -> _W:
            """A workload controller writing and recording events as its service account."""
            client = writer(name)
            recorder = EventRecorder(client, component or name, clock=clock)
            return cls(
                client, informers=self._informers, recorder=recorder, clock=clock, metrics=metrics
            )

        self.statefulset_controller = workload(StatefulSetController, STATEFULSET_CONTROLLER)
        # kube-controller-manager's DaemonSet events say "daemonset-controller".
        self.daemonset_controller = workload(
            DaemonSetController, DAEMONSET_CONTROLLER, "daemonset-controller"
        )
        self.job_controller = workload(JobController, JOB_CONTROLLER)
        self.cronjob_controller = workload(CronJobController, CRONJOB_CONTROLLER)
        self.ttl_after_finished_controller = TTLAfterFinishedController(
            writer(TTL_AFTER_FINISHED_CONTROLLER),
            informers=self._informers,
            clock=clock,
            metrics=metrics,
        )
        self.deployment_controller = workload(DeploymentController, DEPLOYMENT_CONTROLLER)
        self.replicaset_controller = workload(ReplicaSetController, REPLICASET_CONTROLLER)
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
