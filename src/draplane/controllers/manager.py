"""`ControllerManager`: runs the resource claim controller, garbage collector, namespace
controller, service account controller, ClusterRole aggregation controller, the Deployment,
ReplicaSet, StatefulSet and DaemonSet controllers, the Job, CronJob and TTL-after-finished
controllers and the resource quota controller in one asyncio loop, like kube-controller-manager
with `--use-service-account-credentials`.

The shared informers read as the manager's own user (`system:kube-controller-manager`, which may
list and watch everything); each controller writes through its own client, as its service
account `system:serviceaccount:kube-system:<controller>`, so each holds only its
`system:controller:<controller>` role. The manager builds one `ControllerContext` (the shared
informers, each controller's client by name, the clock, the metrics registry) and hands it to
every controller.

Controllers go by kube-controller-manager's names (`resourceclaim-controller`,
`garbage-collector-controller`, ...; `CONTROLLER_NAMES`), which pick the ones to run
(`controllers=`, read from a `--controllers` list by `enabled_controllers`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
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
from draplane.controllers.resourcequota import ResourceQuotaController
from draplane.controllers.serviceaccounts import ServiceAccountsController
from draplane.controllers.statefulset import StatefulSetController
from draplane.controllers.ttlafterfinished import TTLAfterFinishedController


class _Runnable(Protocol):
    async def run(self) -> None: ...


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Controller:
    service_account: str
    """Its service account in kube-system."""
    alias: str
    """The name kube-controller-manager still accepts from before 1.28 (`GetAliases`)."""
    new: Callable[[ControllerContext, versions.Mode], _Runnable]


_CONTROLLERS: dict[str, _Controller] = {
    "resourceclaim-controller": _Controller(
        ResourceClaimController.NAME,
        "resource-claim-controller",
        lambda ctx, mode: ResourceClaimController(ctx, mode=mode),
    ),
    "garbage-collector-controller": _Controller(
        GarbageCollector.NAME,
        "garbagecollector",
        lambda ctx, mode: GarbageCollector(ctx, resources=mode.stored),
    ),
    "namespace-controller": _Controller(
        NamespaceController.NAME,
        "namespace",
        lambda ctx, mode: NamespaceController(ctx, resources=mode.stored),
    ),
    "serviceaccount-controller": _Controller(
        ServiceAccountsController.NAME,
        "serviceaccount",
        lambda ctx, _mode: ServiceAccountsController(ctx),
    ),
    "clusterrole-aggregation-controller": _Controller(
        ClusterRoleAggregationController.NAME,
        "clusterrole-aggregation",
        lambda ctx, _mode: ClusterRoleAggregationController(ctx),
    ),
    "statefulset-controller": _Controller(
        StatefulSetController.NAME, "statefulset", lambda ctx, _mode: StatefulSetController(ctx)
    ),
    "daemonset-controller": _Controller(
        DaemonSetController.NAME, "daemonset", lambda ctx, _mode: DaemonSetController(ctx)
    ),
    "job-controller": _Controller(JobController.NAME, "job", lambda ctx, _mode: JobController(ctx)),
    "cronjob-controller": _Controller(
        CronJobController.NAME, "cronjob", lambda ctx, _mode: CronJobController(ctx)
    ),
    "ttl-after-finished-controller": _Controller(
        TTLAfterFinishedController.NAME,
        "ttl-after-finished",
        lambda ctx, _mode: TTLAfterFinishedController(ctx),
    ),
    "deployment-controller": _Controller(
        DeploymentController.NAME, "deployment", lambda ctx, _mode: DeploymentController(ctx)
    ),
    "replicaset-controller": _Controller(
        ReplicaSetController.NAME, "replicaset", lambda ctx, _mode: ReplicaSetController(ctx)
    ),
    "resourcequota-controller": _Controller(
        ResourceQuotaController.NAME,
        "resourcequota",
        lambda ctx, mode: ResourceQuotaController(ctx, mode=mode),
    ),
}
CONTROLLER_NAMES = tuple(_CONTROLLERS)
"""The controllers by kube-controller-manager's names (its `--controllers` flag,
cmd/kube-controller-manager/names), in the order the manager builds them."""
CONTROLLERS = tuple(c.service_account for c in _CONTROLLERS.values())
"""The controllers' service accounts in kube-system."""
_BY_ALIAS = {c.alias: name for name, c in _CONTROLLERS.items()}


def controller_name(name: str) -> str | None:
    """The controller's name (`CONTROLLER_NAMES`) for its name or upstream alias, else None."""
    return name if name in _CONTROLLERS else _BY_ALIAS.get(name)


def service_account(controller: str) -> str:
    """The kube-system service account of the controller named `controller`."""
    return _CONTROLLERS[controller].service_account


def enabled_controllers(controllers: Sequence[str]) -> tuple[str, ...]:
    """The controllers a kube-controller-manager `--controllers` list enables, read as upstream
    reads it: `*` enables every controller, `foo` enables foo, `-foo` disables it (by name or
    alias), and the first entry naming a controller wins. Raises ValueError for a name it does
    not know."""
    entries: list[str] = []
    for entry in controllers:
        off = entry.startswith("-")
        name = controller_name(entry.removeprefix("-")) if entry != "*" else "*"
        if name is None:
            known = ", ".join(CONTROLLER_NAMES)
            raise ValueError(
                f"{entry.removeprefix('-')!r} is not in the list of known controllers: {known}"
            )
        entries.append(f"-{name}" if off else name)
    return tuple(name for name in CONTROLLER_NAMES if _enabled(name, entries))


def _enabled(name: str, controllers: Sequence[str]) -> bool:
    star = False
    for entry in controllers:
        if entry == name:
            return True
        if entry == f"-{name}":
            return False
        star = star or entry == "*"
    return star


class ControllerManager:
    def __init__(
        self,
        client: Client,
        *,
        client_for: ClientFor | None = None,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
        mode: versions.Mode,
        controllers: Collection[str] = CONTROLLER_NAMES,
    ) -> None:
        """`mode`: the Kubernetes version served (1.36: the resource claim controller on
        resource.k8s.io/v1). `controllers`: the names of those to run (default all;
        `enabled_controllers` reads a `--controllers` list)."""
        unknown = sorted(set(controllers) - set(CONTROLLER_NAMES))
        if unknown:
            raise ValueError(f"unknown controllers: {', '.join(unknown)}")
        self._informers = InformerFactory(client, clock=clock)
        ctx = ControllerContext(
            self._informers,
            client_for or (lambda _name: client),
            clock=clock,
            metrics=metrics,
        )
        self.controllers: dict[str, _Runnable] = {
            name: controller.new(ctx, mode)
            for name, controller in _CONTROLLERS.items()
            if name in controllers
        }
        """The controllers run, by kube-controller-manager's names."""

    def has_synced(self) -> bool:
        return self._informers.has_synced()

    async def run(self) -> None:
        """Run every controller until cancelled."""
        await self._informers.start()
        try:
            async with asyncio.TaskGroup() as group:
                for controller in self.controllers.values():
                    group.create_task(controller.run())
        finally:
            await self._informers.stop()
