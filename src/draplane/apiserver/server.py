"""`ApiServer`: HTTPS on 127.0.0.1 in the caller's event loop, with its data dir bootstrapped.

First start writes `DIR/ca.crt` (+ key), the serving certificate, `DIR/tokens` with the component
users, and `DIR/kubeconfig` for the admin (context `draplane`). Port 0 picks a free port; the
kubeconfig is rewritten on every start with the port actually bound. Several replicas may share
one data dir (on one etcd): the files are created under `DIR/bootstrap.lock` by whichever starts
first and read by the others; `DIR/kubeconfig` names the replica that started last.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import prometheus_client
from aiohttp import web

from draplane.api import versions
from draplane.api.auth import ADMIN
from draplane.api.catalog import Catalog
from draplane.api.handler import ApiHandler
from draplane.apiserver import authn, certs
from draplane.apiserver.apimetrics import RequestMetrics, StorageObjectCounts
from draplane.apiserver.app import AppConfig, create_app
from draplane.apiserver.audit import AuditLog
from draplane.apiserver.authentication import sakeys
from draplane.apiserver.authentication.bearer import BearerAuthenticator
from draplane.apiserver.authentication.satokens import ServiceAccountAuthenticator, TokenIssuer
from draplane.apiserver.authorization import AlwaysAllow
from draplane.apiserver.health import CheckFn, HealthChecks
from draplane.apiserver.httpwatch import ActiveWatches
from draplane.apiserver.kubeconfig import (
    KUBECONFIG_FILE,
    build_kubeconfig,
    write_kubeconfig,
)
from draplane.apiserver.masterservice import ensure_kubernetes_service
from draplane.apiserver.parseerrors import StatusAppRunner
from draplane.apiserver.registry import Registry, lookup_core_object
from draplane.apiserver.serviceips import DEFAULT_SERVICE_CIDR
from draplane.clock import REAL_CLOCK, Clock
from draplane.metrics import component_registry
from draplane.storage import files, mode_marker
from draplane.storage.interface import Storage

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
BOOTSTRAP_LOCK = "bootstrap.lock"
SHUTDOWN_TIMEOUT = 5.0


class ApiServer:
    def __init__(
        self,
        data_dir: str | Path,
        *,
        port: int = 6443,
        storage: Storage,
        handler: ApiHandler | None = None,
        metrics: prometheus_client.CollectorRegistry | None = None,
        clock: Clock = REAL_CLOCK,
        audit_log_path: str | Path | None = None,
        mode: versions.Mode = versions.DEFAULT,
        service_cidr: str = DEFAULT_SERVICE_CIDR,
    ) -> None:
        self.data_dir = Path(data_dir)
        self._service_cidr = service_cidr
        catalog = getattr(handler, "kinds", None)
        self.mode: versions.Mode = catalog.mode if isinstance(catalog, Catalog) else mode
        """The Kubernetes version served (a registry passed in serves its own)."""
        self._audit_log_path = Path(audit_log_path) if audit_log_path else None
        self._requested_port = port
        self._port = 0
        self.storage = storage
        self._handler = handler
        self._owns_handler = handler is None
        self.metrics = metrics if metrics is not None else component_registry()
        self._clock = clock
        self._health = HealthChecks()
        self._watches = ActiveWatches(self.metrics)
        self._runner: web.AppRunner | None = None
        self.object_counts: StorageObjectCounts | None = None
        """apiserver_storage_objects (from start on)."""
        # kube-apiserver's name for the check of its etcd; "storage" for the embedded stores.
        check_name = str(getattr(storage, "CHECK_NAME", "storage"))
        self._health.add_ready_check(check_name, self._storage_ready)

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self._port}"

    @property
    def kubeconfig_path(self) -> Path:
        return self.data_dir / KUBECONFIG_FILE

    @property
    def active_watches(self) -> int:
        """How many watch streams are open right now."""
        return len(self._watches)

    @property
    def connection_peers(self) -> list[tuple[str, int]]:
        """The client address of each open connection (a keep-alive client keeps one)."""
        server = self._runner.server if self._runner is not None else None
        peers = []
        for protocol in server.connections if server is not None else []:
            peer = protocol.transport.get_extra_info("peername") if protocol.transport else None
            if peer is not None:
                peers.append((str(peer[0]), int(peer[1])))
        return peers

    @property
    def handler(self) -> ApiHandler:
        if self._handler is None:
            raise RuntimeError("ApiServer.handler is available after start()")
        return self._handler

    def add_ready_check(self, name: str, fn: CheckFn) -> None:
        """A check shown by /readyz (`[+]name ok`); fn returns a bool or awaits one."""
        self._health.add_ready_check(name, fn)

    async def _storage_ready(self) -> bool:
        """Fails (with the reason logged) while the store cannot write, e.g. its disk is full."""
        await self.storage.check()
        return True

    async def _ensure_handler(self) -> ApiHandler:
        if self._handler is None:
            registry = Registry(
                self.storage, clock=self._clock, service_cidr=self._service_cidr, mode=self.mode
            )
            if self._audit_log_path is not None:
                registry.audit_log = AuditLog(self._audit_log_path, clock=self._clock)
            await registry.start()
            self._handler = registry
        return self._handler

    async def start(self) -> None:
        """Serve; `ModeMismatchError` when the data dir holds the other mode's cluster."""
        mode_marker.ensure_mode(self.data_dir, self.mode)
        # Replicas started at once on one data dir: the first creates the CA, serving
        # certificate, tokens and signing key, the others wait for it and read them.
        files.private_dir(self.data_dir)
        with files.locked(self.data_dir / BOOTSTRAP_LOCK):
            paths = certs.ensure_certs(self.data_dir)
            authn.ensure_bootstrap_tokens(self.data_dir)
            issuer = TokenIssuer(sakeys.load_or_create(self.data_dir))
        handler = await self._ensure_handler()
        if isinstance(handler, Registry):
            handler.token_issuer = issuer
        authenticator = BearerAuthenticator(
            authn.TokenAuthenticator(authn.token_file(self.data_dir)),
            ServiceAccountAuthenticator.for_issuer(issuer),
            functools.partial(lookup_core_object, self.storage),
            clock=self._clock,
        )
        if isinstance(handler, Registry):
            handler.token_authenticator = authenticator
        app = create_app(
            AppConfig(
                handler=handler,
                authenticator=authenticator,
                authorizer=getattr(handler, "authorizer", None) or AlwaysAllow(),
                clock=self._clock,
                health=self._health,
                metrics_registry=self.metrics,
                request_metrics=RequestMetrics(self.metrics),
                watches=self._watches,
                catalog=getattr(handler, "kinds", None) or Catalog(self.mode),
            )
        )
        runner = StatusAppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT
        )
        await runner.setup()
        site = web.TCPSite(
            runner, HOST, self._requested_port, ssl_context=paths.server_ssl_context()
        )
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self._port = int(runner.addresses[0][1])
        self.object_counts = StorageObjectCounts(self.metrics, self.storage, self.mode.stored)
        await self.object_counts.start()
        if isinstance(handler, Registry):
            await ensure_kubernetes_service(handler, HOST, self._port)
        token = authn.ensure_user_token(self.data_dir, ADMIN)
        config = build_kubeconfig(
            server=self.url, ca_pem=paths.ca_cert.read_bytes(), user=ADMIN, token=token
        )
        write_kubeconfig(self.kubeconfig_path, config)
        log.info("API server listening on %s (kubeconfig %s)", self.url, self.kubeconfig_path)

    async def stop(self) -> None:
        if self.object_counts is not None:
            await self.object_counts.stop()
        await self._watches.close_all()
        if self._runner is not None:
            server = self._runner.server
            transports = [
                c.transport for c in (server.connections if server else []) if c.transport
            ]
            await self._runner.cleanup()
            self._runner = None
            # Closing a TLS connection waits for the client's close_notify, which a client
            # that has dropped its socket never sends: end those sockets now.
            for transport in transports:
                transport.abort()
        if self._owns_handler and self._handler is not None:
            close = getattr(self._handler, "stop", None) or getattr(self._handler, "close", None)
            if close is not None:
                await close()
