"""`ControlPlane`: API server, controller-manager, scheduler, example driver(s) and simulated
nodes wired together in one asyncio loop (less what `ControlPlaneConfig.disabled` leaves out).

Components talk to the API as their own users: through `LocalClient` (same authentication,
admission and validation path as HTTP, no wire) or, with `transport="http"`, through
`RESTClient` over HTTPS with each user's bearer token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from draplane.api import auth, meta, versions
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.apiserver import authn
from draplane.apiserver.audit import AuditLog
from draplane.apiserver.kubeconfig import build_kubeconfig, write_kubeconfig
from draplane.apiserver.registry import Registry
from draplane.apiserver.server import ApiServer
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.client.kubeconfig import parse_kubeconfig
from draplane.client.local import LocalClient
from draplane.client.requestlog import logged
from draplane.client.rest import RESTClient
from draplane.clock import REAL_CLOCK, Clock
from draplane.controllers.manager import ControllerManager
from draplane.controlplane.disable import NOTHING, Disabled
from draplane.controlplane.drivers import DriverSpec, ensure_driver_classes
from draplane.controlplane.fleet import (
    check_mode,
    ensure_fleet_classes,
    fleet_node_shapes,
    fleet_plugin_factories,
)
from draplane.dra.controller import DRIVER_WORKERS, Delays
from draplane.dra.kubeletplugin import NodePluginRegistry
from draplane.drivers.example import (
    KubeletPluginRunner,
    NetworkPoolController,
    Resources,
    StatusClientSource,
    example_controller,
    node_plugin_factory,
    status_clients,
    structured_node_plugin_factory,
)
from draplane.fleets import Fleet
from draplane.kubeletapi import KUBECONFIG
from draplane.metrics import component_registry
from draplane.node import Nodes
from draplane.scheduler.scheduler import Scheduler
from draplane.storage import mode_marker
from draplane.storage.etcd_flags import EtcdFlags
from draplane.storage.factory import open_storage
from draplane.storage.files import private_dir

log = logging.getLogger(__name__)


@dataclass
class ControlPlaneConfig:
    data_dir: str | None = None
    """None: a temporary directory (removed on stop)."""
    port: int = 6443
    """0 picks a free port."""
    nodes: int = 4
    node_prefix: str = "node-"
    store: str = "sqlite"
    transport: Literal["local", "http"] = "local"
    queueing_hints: bool = True
    pre_enqueue: bool = True
    drivers: list[DriverSpec] = field(default_factory=lambda: [DriverSpec()])
    audit_log_path: str | None = None
    driver_workers: int = DRIVER_WORKERS
    restored_store: bool = False
    """The sqlite store was restored from a backup on purpose (see `SqliteStorage`)."""
    driver_delays: Delays = field(default_factory=Delays)
    """The drivers' fixed waits (recheck, mutation cache), on the plane's clock."""
    run_seconds: float | None = None
    """How long containers run when their pod does not say (None: until deleted)."""
    etcd: EtcdFlags | None = None
    """For store "etcd": the cluster to use (None or no servers: a local etcd in the data dir)."""
    kubelet_dir: str | None = None
    """The nodes are kubelets rooted in `<kubelet_dir>/<node>` (1.36 only): the example driver
    registers a kubelet plugin with each over gRPC, and so may any other driver's plugin."""
    kubernetes_version: versions.Mode = versions.DEFAULT
    """The API served (`draplane.api.versions`; 1.36 unless given). `draplane up` passes the mode
    its data dir records (`mode_marker.mode_for`); another mode than the data dir's is refused."""
    disabled: Disabled = NOTHING
    """Components left out (`draplane up --disable`), for upstream's binaries to replace."""
    fleet: Fleet | None = None
    """A fleet profile (1.36 only): its drivers' node plugins publish each node's devices and
    its DeviceClasses are created, instead of `drivers`."""


class _Runnable(Protocol):
    async def run(self) -> None: ...

    def has_synced(self) -> bool: ...


class ControlPlane:
    def __init__(self, config: ControlPlaneConfig, *, clock: Clock = REAL_CLOCK) -> None:
        check_mode(config.fleet, config.kubernetes_version)
        if config.fleet is not None and config.kubelet_dir:
            raise ValueError("a fleet and a kubelet dir: the kubelet plugins publish the devices")
        self.config = config
        self.clock = clock
        self.metrics = component_registry()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if config.data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="draplane-")
            self.data_dir = Path(self._tmp.name)
        else:
            self.data_dir = Path(config.data_dir)
        private_dir(self.data_dir)
        # Before the store is opened: nothing is written to the other mode's data dir.
        mode_marker.ensure_mode(self.data_dir, config.kubernetes_version)
        self.storage = open_storage(
            config.store, str(self.data_dir), restored=config.restored_store, etcd=config.etcd
        )
        self.registry = Registry(self.storage, clock=clock, mode=config.kubernetes_version)
        if config.audit_log_path:
            self.registry.audit_log = AuditLog(Path(config.audit_log_path), clock=clock)
        self.apiserver = ApiServer(
            self.data_dir,
            port=config.port,
            storage=self.storage,
            handler=self.registry,
            metrics=self.metrics,
            clock=clock,
        )
        self.components: dict[str, _Runnable] = {}
        self.node_plugins = NodePluginRegistry()
        self._clients: list[Client] = []
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def kubeconfig_path(self) -> Path:
        return self.apiserver.kubeconfig_path

    def client(self, user: UserInfo = auth.ADMIN_USER) -> Client:
        """A client acting as `user` over the configured transport (logging each request at
        -v 6)."""
        if self.config.transport == "local":
            return logged(LocalClient(self.registry, user))
        token = authn.ensure_user_token(self.data_dir, user.name, user.groups or None)
        return self._token_client(user.name, token)

    def _token_client(self, user: str, token: str) -> Client:
        """A client over HTTPS with a bearer token (closed on stop)."""
        ca = (self.data_dir / "ca.crt").read_bytes()
        config = build_kubeconfig(server=self.apiserver.url, ca_pem=ca, user=user, token=token)
        client = RESTClient(parse_kubeconfig(config, base=self.data_dir))
        self._clients.append(client)
        return logged(client)

    async def start(self) -> None:
        await self.storage.start()
        await self.registry.start()
        await self.apiserver.start()
        self._build_components()
        self.apiserver.add_ready_check("components", self.has_synced)
        await self._ensure_resource_classes()
        for name, component in self.components.items():
            self._tasks.append(asyncio.create_task(self._run(name, component.run), name=name))
        # Thousands of simulated nodes take a while to register and sync their pod watches.
        await self.wait_ready(timeout=60.0 + 0.5 * self.config.nodes)

    def _build_components(self) -> None:
        cfg, clock, metrics = self.config, self.clock, self.metrics
        controllers = cfg.disabled.controllers()
        if controllers:
            self.components["controller-manager"] = ControllerManager(
                self.client(UserInfo(auth.CONTROLLER_MANAGER, "", (auth.SYSTEM_AUTHENTICATED,))),
                client_for=lambda name: self.client(auth.controller_user(name)),
                clock=clock,
                metrics=metrics,
                mode=cfg.kubernetes_version,
                controllers=controllers,
            )
        if not cfg.disabled.scheduler:
            self.components["scheduler"] = self._build_scheduler()
        drivers = {
            versions.Dra.CLASSIC: self._build_classic_drivers,
            versions.Dra.STRUCTURED: self._build_structured_drivers,
        }
        drivers[cfg.kubernetes_version.dra]()
        self.components["nodes"] = self._build_nodes()

    def _build_scheduler(self) -> Scheduler:
        cfg = self.config
        client = self.client(UserInfo(auth.SCHEDULER, "", (auth.SYSTEM_AUTHENTICATED,)))
        return Scheduler(
            client,
            informers=InformerFactory(client, clock=self.clock),
            clock=self.clock,
            metrics=self.metrics,
            queueing_hints=cfg.queueing_hints,
            pre_enqueue=cfg.pre_enqueue,
            mode=cfg.kubernetes_version,
        )

    def _build_classic_drivers(self) -> None:
        """Each driver's allocating controller, and its node plugin on every node."""
        cfg = self.config
        for spec in cfg.drivers:
            resources = Resources(
                devices_per_node=spec.devices_per_node,
                network_attached=spec.network_attached,
                shareable=spec.shareable,
            )
            self.components[f"driver/{spec.name}"] = example_controller(
                self.client(auth.driver_user(spec.name)),
                driver_name=spec.name,
                resources=resources,
                clock=self.clock,
                metrics=self.metrics,
                workers=cfg.driver_workers,
                delays=cfg.driver_delays,
            )
            self.node_plugins.register(spec.name, node_plugin_factory(spec.name))

    def _build_structured_drivers(self) -> None:
        """No allocating controller: each node's plugin publishes the node's slices, the
        controller side only the network-attached pool."""
        if self.config.fleet is not None:
            factories = fleet_plugin_factories(
                self.config.fleet,
                prefix=self.config.node_prefix,
                clock=self.clock,
                status_clients_for=self._driver_plugin_client,
            )
            for driver, factory in factories.items():
                self.node_plugins.register(driver, factory)
            return
        for spec in self.config.drivers:
            if self.config.kubelet_dir:
                self._build_kubelet_plugins(spec)
            factory = structured_node_plugin_factory(
                spec.name,
                spec.profile(),
                clock=self.clock,
                status_client_for=self._driver_plugin_client(spec.name),
            )
            self.node_plugins.register(spec.name, factory)
            if spec.network_attached:
                self.components[f"driver/{spec.name}"] = NetworkPoolController(
                    self.client(auth.driver_user(spec.name)),
                    spec.profile(network=True),
                    driver_name=spec.name,
                    clock=self.clock,
                )

    @property
    def node_names(self) -> list[str]:
        return [f"{self.config.node_prefix}{i}" for i in range(self.config.nodes)]

    def _build_kubelet_plugins(self, spec: DriverSpec) -> None:
        """The driver's kubelet plugin on every node (as a DaemonSet's pods), registering over
        gRPC in the node's kubelet directory; each node's `kubeconfig` is written there."""
        assert self.config.kubelet_dir is not None
        ca = (self.data_dir / "ca.crt").read_bytes()
        for node in self.node_names:
            node_dir = Path(self.config.kubelet_dir) / node
            user = auth.node_user(node)
            token = authn.ensure_user_token(self.data_dir, user.name, user.groups or None)
            node_dir.mkdir(parents=True, exist_ok=True)
            write_kubeconfig(
                node_dir / KUBECONFIG,
                build_kubeconfig(server=self.apiserver.url, ca_pem=ca, user=user.name, token=token),
            )
            self.components[f"kubelet-plugin/{spec.name}/{node}"] = KubeletPluginRunner(
                self.client(user),
                node_name=node,
                kubelet_dir=node_dir,
                profile=spec.profile(),
                driver_name=spec.name,
                clock=self.clock,
            )

    def _driver_plugin_client(self, driver: str) -> StatusClientSource:
        """The client of `driver`'s kubelet plugin on a node: its service account with a token
        bound to the Node (over HTTPS: a TokenRequest asked for as admin; in-process: the user
        such a token authenticates as)."""
        if self.config.transport == "http":
            return status_clients(self.client(), self._token_client, driver)

        async def local(node: Obj) -> Client:
            return self.client(auth.driver_plugin_user(driver, meta.name(node)))

        return local

    def _build_nodes(self) -> Nodes:
        return Nodes(
            lambda node: self.client(auth.node_user(node)),
            count=self.config.nodes,
            name_prefix=self.config.node_prefix,
            plugins=self.node_plugins,
            clock=self.clock,
            run_seconds=self.config.run_seconds,
            claims=self.config.kubernetes_version.resource_claims,
            kubelet_version=self.config.kubernetes_version.git_version,
            kubelet_dir=Path(self.config.kubelet_dir) if self.config.kubelet_dir else None,
            shape_for=fleet_node_shapes(self.config.fleet, prefix=self.config.node_prefix),
        )

    async def restart_nodes(self) -> None:
        """Stop the simulated nodes and start new ones over the same API state and node
        plugins, as kubelets restarting on their machines."""
        task = next(t for t in self._tasks if t.get_name() == "nodes")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        self._tasks.remove(task)
        nodes = self.components["nodes"] = self._build_nodes()
        self._tasks.append(asyncio.create_task(self._run("nodes", nodes.run), name="nodes"))
        await self.wait_ready()

    async def _ensure_resource_classes(self) -> None:
        if self.config.fleet is not None:
            mode = self.config.kubernetes_version
            await ensure_fleet_classes(self.client(), self.config.fleet, mode=mode)
            return
        await ensure_driver_classes(
            self.client(), self.config.drivers, mode=self.config.kubernetes_version
        )

    async def _run(self, name: str, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        try:
            await run()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("component %s failed", name)
            raise

    def has_synced(self) -> bool:
        return all(c.has_synced() for c in self.components.values())

    async def wait_ready(self, timeout: float = 60.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.has_synced():
            for task in self._tasks:
                if task.done() and task.exception() is not None:
                    raise RuntimeError(f"component {task.get_name()} failed") from task.exception()
            if loop.time() > deadline:
                pending = [n for n, c in self.components.items() if not c.has_synced()]
                raise TimeoutError(f"components not synced: {pending}")
            await asyncio.sleep(0.02)

    async def wait(self) -> None:
        """Return when a started component stops; raise what it failed with. Components run
        until cancelled, so this returns only when one of them is broken."""
        if not self._tasks:
            raise RuntimeError("ControlPlane.wait() needs a started control plane")
        done, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise RuntimeError(f"component {task.get_name()} failed") from task.exception()
        name = next(iter(done)).get_name()
        raise RuntimeError(f"component {name} stopped")

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        for client in self._clients:
            await client.close()
        await self.apiserver.stop()
        await self.registry.stop()
        await self.storage.close()
        if self._tmp is not None:
            self._tmp.cleanup()
