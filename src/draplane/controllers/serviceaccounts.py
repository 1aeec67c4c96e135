"""The service account controller: every active namespace has a `default` ServiceAccount
(pkg/controller/serviceaccount/serviceaccounts_controller.go). Namespaces and service accounts
are watched; a namespace without `default` gets it created again."""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry

from draplane.api import meta
from draplane.api.errors import StatusError, is_already_exists
from draplane.api.kinds import NAMESPACES, SERVICE_ACCOUNTS
from draplane.api.meta import Obj
from draplane.client.informer import DeletedFinalStateUnknown, Informer, InformerFactory, unwrap
from draplane.client.interface import Client
from draplane.client.workers import run_workers
from draplane.client.workqueue import RateLimitingQueue
from draplane.clock import REAL_CLOCK, Clock
from draplane.klog import V2

log = logging.getLogger(__name__)

DEFAULT_SERVICE_ACCOUNT = "default"
QUEUE_NAME = "serviceaccount"


class ServiceAccountsController:
    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
    ) -> None:
        self._client = client
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(
            name=QUEUE_NAME, clock=clock, metrics=metrics
        )
        self._namespaces: Informer = informers.informer(NAMESPACES)
        self._accounts: Informer = informers.informer(SERVICE_ACCOUNTS)
        self._namespaces.add_handler(
            on_add=self._enqueue_namespace,
            on_update=lambda _, ns: self._enqueue_namespace(ns),
        )
        self._accounts.add_handler(on_delete=self._account_deleted)

    def has_synced(self) -> bool:
        return self._namespaces.has_synced() and self._accounts.has_synced()

    async def run(self, workers: int = 1) -> None:
        await self._namespaces.wait_synced()
        await self._accounts.wait_synced()
        await run_workers(self.queue, self.sync, workers=workers, name=QUEUE_NAME)

    def _enqueue_namespace(self, namespace: Obj) -> None:
        self.queue.add(meta.name(namespace))

    def _account_deleted(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        account = unwrap(obj)
        if meta.name(account) == DEFAULT_SERVICE_ACCOUNT:
            self.queue.add(meta.namespace(account))

    async def sync(self, namespace: str) -> None:
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
            await self._client.create(SERVICE_ACCOUNTS, account, namespace)
            log.log(V2, "created ServiceAccount %s/%s", namespace, DEFAULT_SERVICE_ACCOUNT)
        except StatusError as err:
            if not (is_already_exists(err) or "being terminated" in err.message):
                raise
