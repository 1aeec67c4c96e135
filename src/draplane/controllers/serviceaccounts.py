"""The service account controller: every active namespace has a `default` ServiceAccount
(pkg/controller/serviceaccount/serviceaccounts_controller.go). Namespaces and service accounts
are watched; a namespace without `default` gets it created again."""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_already_exists
from draplane.api.kinds import NAMESPACES, SERVICE_ACCOUNTS
from draplane.api.meta import Obj
from draplane.client.informer import DeletedFinalStateUnknown, Informer, unwrap
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.klog import V2

log = logging.getLogger(__name__)

DEFAULT_SERVICE_ACCOUNT = "default"
QUEUE_NAME = "serviceaccount"


class ServiceAccountsController(QueueController):
    NAME = "service-account-controller"
    QUEUE_NAME = QUEUE_NAME
    WORKERS = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self._namespaces: Informer = ctx.informers.informer(NAMESPACES)
        self._accounts: Informer = ctx.informers.informer(SERVICE_ACCOUNTS)
        self._namespaces.add_handler(
            on_add=self._enqueue_namespace,
            on_update=lambda _, ns: self._enqueue_namespace(ns),
        )
        self._accounts.add_handler(on_delete=self._account_deleted)

    def informers(self) -> tuple[Informer, ...]:
        return (self._namespaces, self._accounts)

    def _enqueue_namespace(self, namespace: Obj) -> None:
        self.queue.add(ObjectKey(NAMESPACES.kind, "", meta.name(namespace)))

    def _account_deleted(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        account = unwrap(obj)
        if meta.name(account) == DEFAULT_SERVICE_ACCOUNT:
            self.queue.add(ObjectKey(NAMESPACES.kind, "", meta.namespace(account)))

    async def sync(self, key: ObjectKey) -> None:
        namespace = key.name
        ns = self._namespaces.lister.get(namespace)
        if ns is None or meta.deletion_timestamp(ns):
            return
        if self._accounts.lister.get(DEFAULT_SERVICE_ACCOUNT, namespace) is not None:
            return
        account: Obj = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": namespace},
        }
        try:
            await self.client.create(SERVICE_ACCOUNTS, account, namespace)
            log.log(V2, "created ServiceAccount %s/%s", namespace, DEFAULT_SERVICE_ACCOUNT)
        except StatusError as err:
            if not (is_already_exists(err) or "being terminated" in err.message):
                raise
