"""The ClusterRole aggregation controller: keeps each aggregated ClusterRole's rules equal to the
union of the rules of the ClusterRoles its `aggregationRule` selects.

Any ClusterRole change enqueues every aggregated ClusterRole (the set is small and the
dependencies are unknown, as upstream does). `sync` computes the rules from the informer's cache
and writes them with a plain update carrying the cached resourceVersion; a conflict requeues.
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_not_found
from draplane.api.kinds import CLUSTER_ROLES
from draplane.apiserver.authorization.aggregation import aggregated_rules, rules_differ
from draplane.client.informer import Informer
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.klog import V2

log = logging.getLogger(__name__)

QUEUE_NAME = "ClusterRoleAggregator"
WORKERS = 2


class ClusterRoleAggregationController(QueueController):
    NAME = "clusterrole-aggregation-controller"
    QUEUE_NAME = QUEUE_NAME
    WORKER_NAME = "clusterrole-aggregation"
    WORKERS = WORKERS

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self._roles: Informer = ctx.informers.informer(CLUSTER_ROLES)
        self._roles.add_handler(
            on_add=lambda _: self._enqueue_all(),
            on_update=lambda _old, _new: self._enqueue_all(),
            on_delete=lambda _: self._enqueue_all(),
        )

    def informers(self) -> tuple[Informer, ...]:
        return (self._roles,)

    def _enqueue_all(self) -> None:
        for role in self._roles.lister.list():
            if role.get("aggregationRule") is not None:
                self.queue.add(ObjectKey(CLUSTER_ROLES.kind, "", meta.name(role)))

    async def sync(self, key: ObjectKey) -> None:
        role = self._roles.lister.get(key.name)
        if role is None or role.get("aggregationRule") is None:
            return
        rules = aggregated_rules(role, self._roles.lister.list())
        if not rules_differ(role, rules):
            return
        updated = meta.deep_copy(role)
        updated["rules"] = rules
        try:
            await self.client.update(CLUSTER_ROLES, updated)
        except StatusError as err:
            if is_not_found(err):
                return
            raise
        log.log(V2, "clusterrole %s: %d aggregated rules written", key.name, len(rules))
