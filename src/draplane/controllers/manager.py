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

from prometheus_client import CollectorRegistry

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
    ) -> None:
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
        )
        self.garbage_collector = GarbageCollector(
            writer(GARBAGE_COLLECTOR), informers=self._informers, clock=clock, metrics=metrics
        )
        self.namespace_controller = NamespaceController(
            writer(NAMESPACE_CONTROLLER), informers=self._informers, clock=clock, metrics=metrics
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
        sts_client = writer(STATEFULSET_CONTROLLER)
        self.statefulset_controller = StatefulSetController(
            sts_client,
            informers=self._informers,
            recorder=EventRecorder(sts_client, STATEFULSET_CONTROLLER, clock=clock),
            clock=clock,
            metrics=metrics,
        )
        ds_client = writer(DAEMONSET_CONTROLLER)
        self.daemonset_controller = DaemonSetController(
            ds_client,
            informers=self._informers,
            recorder=EventRecorder(ds_client, "daemonset-controller", clock=clock),
            clock=clock,
            metrics=metrics,
        )
        job_client = writer(JOB_CONTROLLER)
        self.job_controller = JobController(
            job_client,
            informers=self._informers,
            recorder=EventRecorder(job_client, JOB_CONTROLLER, clock=clock),
            clock=clock,
            metrics=metrics,
        )
        cronjob_client = writer(CRONJOB_CONTROLLER)
        self.cronjob_controller = CronJobController(
            cronjob_client,
            informers=self._informers,
            recorder=EventRecorder(cronjob_client, CRONJOB_CONTROLLER, clock=clock),
            clock=clock,
            metrics=metrics,
        )
        self.ttl_after_finished_controller = TTLAfterFinishedController(
            writer(TTL_AFTER_FINISHED_CONTROLLER),
            informers=self._informers,
            clock=clock,
            metrics=metrics,
        )
        deployment_client = writer(DEPLOYMENT_CONTROLLER)
        self.deployment_controller = DeploymentController(
            deployment_client,
            informers=self._informers,
            recorder=EventRecorder(deployment_client, DEPLOYMENT_CONTROLLER, clock=clock),
            clock=clock,
            metrics=metrics,
        )
        replicaset_client = writer(REPLICASET_CONTROLLER)
        self.replicaset_controller = ReplicaSetController(
            replicaset_client,
            informers=self._informers,
            recorder=EventRecorder(replicaset_client, REPLICASET_CONTROLLER, clock=clock),
            clock=clock,
            metrics=metrics,
        )

    def has_synced(self) -> bool:
        return self._informers.has_synced()

    async def run(self) -> None:
        """Run every controller until cancelled."""
        await self._informers.start()
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.resource_claim_controller.run())
                group.create_task(self.garbage_collector.run())
                group.create_task(self.namespace_controller.run())
                group.create_task(self.service_account_controller.run())
                group.create_task(self.clusterrole_aggregation_controller.run())
                group.create_task(self.statefulset_controller.run())
                group.create_task(self.daemonset_controller.run())
                group.create_task(self.job_controller.run())
                group.create_task(self.cronjob_controller.run())
                group.create_task(self.ttl_after_finished_controller.run())
                group.create_task(self.deployment_controller.run())
                group.create_task(self.replicaset_controller.run())
        finally:
            await self._informers.stop()
