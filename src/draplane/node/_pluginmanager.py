"""`PluginManager`: the kubelet's plugin watcher and DRA plugin registration
(pkg/kubelet/pluginmanager, pkg/kubelet/cm/dra/plugin) for one simulated node.

It polls `<kubelet dir>/plugins_registry/` for Unix sockets. A new socket (or one that came
back, a new inode at the same path) is dialed: `GetInfo` must answer type `DRAPlugin` with a
driver name and `supported_versions`; the first of the plugin's services that the node speaks
(`v1.DRAPlugin`, `v1beta1.DRAPlugin`) is used and `NotifyRegistrationStatus` reports the
outcome. A socket that disappears deregisters its plugin. A failed registration is retried
every `RETRY_SECONDS`, as kubelet's reconciler retries. Each socket registers in a task of its
own with kubelet's timeouts (GetInfo 1 s), so a socket that accepts and hangs delays no other
plugin. Several plugins of one driver may be registered; the latest serves.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from draplane.klog import V4
from draplane.kubeletapi import (
    DRA_PLUGIN_TYPE,
    DRA_SERVICES,
    registration,
    registration_grpc,
)

log = logging.getLogger(__name__)

POLL_SECONDS = 0.2
RETRY_SECONDS = 2.0
GET_INFO_TIMEOUT = 1.0
"""kubelet's operation generator gives GetInfo one second."""
REGISTRATION_TIMEOUT = 10.0
"""For NotifyRegistrationStatus."""


class RegistrationError(Exception):
    """What NotifyRegistrationStatus reports to a plugin that was not registered."""


@dataclass
class RegisteredPlugin:
    """One registered instance of a driver's kubelet plugin."""

    driver_name: str
    endpoint: str
    service: str
    """The DRA service spoken with it, e.g. `v1.DRAPlugin`."""
    socket: Path
    """Its registration socket."""
    channel: grpc.aio.Channel


def choose_service(supported: list[str]) -> str:
    """The first of the plugin's services the node speaks, as kubelet chooses."""
    if not supported:
        raise RegistrationError("empty list of supported gRPC services")
    for service in supported:
        if service in DRA_SERVICES:
            return service
    raise RegistrationError(
        f"none of services supported by the plugin {supported} are supported by the kubelet "
        f"{list(DRA_SERVICES)}"
    )


class PluginManager:
    """The DRA plugins registered with one node, kept in step with its registry directory."""

    def __init__(
        self,
        registry_dir: Path,
        *,
        node_name: str,
        on_change: Callable[[str], None] = lambda _driver: None,
    ) -> None:
        """`on_change(driver)` is called when a driver's plugin registers or goes away."""
        self.registry_dir = registry_dir
        self.node_name = node_name
        self._on_change = on_change
        self._plugins: dict[str, list[RegisteredPlugin]] = {}
        self._seen: dict[Path, int] = {}
        """Registration socket -> inode, of those registered."""
        self._failed: dict[tuple[Path, int], float] = {}
        self._registering: dict[Path, asyncio.Task[None]] = {}

    def plugin(self, driver_name: str) -> RegisteredPlugin | None:
        """The plugin to call for the driver: the latest registered one."""
        instances = self._plugins.get(driver_name)
        return instances[-1] if instances else None

    @property
    def driver_names(self) -> list[str]:
        return sorted(name for name, instances in self._plugins.items() if instances)

    async def run(self) -> None:
        """Watch the registry directory until cancelled (then close every connection)."""
        self.registry_dir.mkdir(parents=True, exist_ok=True)
        try:
            while True:
                await self.sync()
                await asyncio.sleep(POLL_SECONDS)
        finally:
            for task in list(self._registering.values()):
                task.cancel()
            for socket in list(self._seen):
                await self._deregister(socket)

    async def sync(self) -> None:
        """One pass over the directory: register new sockets, deregister vanished ones."""
        present = _sockets(self.registry_dir)
        for socket, inode in list(self._seen.items()):
            if present.get(socket) != inode:
                await self._deregister(socket)
        for key in [k for k in self._failed if present.get(k[0]) != k[1]]:
            del self._failed[key]
        for socket, inode in present.items():
            if socket in self._seen:
                continue
            failed_at = self._failed.get((socket, inode))
            if failed_at is not None and time.monotonic() - failed_at < RETRY_SECONDS:
                continue
            if socket not in self._registering:
                task = asyncio.create_task(self._attempt(socket, inode))
                self._registering[socket] = task

    async def _attempt(self, socket: Path, inode: int) -> None:
        """Register one socket, in a task of its own: a plugin that accepts and never answers
        holds back no other plugin (and no deregistration)."""
        try:
            if await self._register(socket):
                self._seen[socket] = inode
                self._failed.pop((socket, inode), None)
            else:
                self._failed[(socket, inode)] = time.monotonic()
        finally:
            self._registering.pop(socket, None)

    async def _register(self, socket: Path) -> bool:
        channel = grpc.aio.insecure_channel(f"unix://{socket}")
        stub = registration_grpc.RegistrationStub(channel)
        try:
            info = await stub.GetInfo(registration.InfoRequest(), timeout=GET_INFO_TIMEOUT)
        except grpc.aio.AioRpcError as err:
            # A socket left behind by a plugin that died is retried quietly.
            level = logging.WARNING if not self._failed_before(socket) else V4
            log.log(
                level,
                "node %s: RegisterPlugin error -- failed to get plugin info using RPC GetInfo "
                "at socket %s: %s: %s",
                self.node_name,
                socket,
                err.code().name,
                err.details(),
            )
            await channel.close()
            return False
        try:
            plugin = self._validate(info, socket)
        except RegistrationError as err:
            log.warning("node %s: plugin %s not registered: %s", self.node_name, info.name, err)
            await _notify(stub, registered=False, error=str(err))
            await channel.close()
            return False
        # As kubelet: the plugin is registered before it is told so, so a plugin that heard
        # it is registered is prepared with at once.
        self._plugins.setdefault(plugin.driver_name, []).append(plugin)
        if not await _notify(stub, registered=True, error=""):
            self._plugins[plugin.driver_name].remove(plugin)
            await plugin.channel.close()
            await channel.close()
            return False
        await channel.close()
        log.info(
            "node %s: registered DRA plugin %s at %s (%s)",
            self.node_name,
            plugin.driver_name,
            plugin.endpoint,
            plugin.service,
        )
        self._on_change(plugin.driver_name)
        return True

    def _failed_before(self, socket: Path) -> bool:
        return any(path == socket for path, _ in self._failed)

    def _validate(self, info: Any, socket: Path) -> RegisteredPlugin:
        if info.type != DRA_PLUGIN_TYPE:
            raise RegistrationError(f"plugin type {info.type!r} is not supported")
        if not info.name:
            raise RegistrationError("the plugin has no name")
        service = choose_service(list(info.supported_versions))
        endpoint = info.endpoint or str(socket)
        for existing in self._plugins.get(info.name, []):
            if existing.endpoint == endpoint:
                raise RegistrationError(
                    f"DRA plugin {info.name}: endpoint {endpoint} already registered"
                )
        channel = grpc.aio.insecure_channel(f"unix://{endpoint}")
        return RegisteredPlugin(info.name, endpoint, service, socket, channel)

    async def _deregister(self, socket: Path) -> None:
        self._seen.pop(socket, None)
        for driver_name, instances in self._plugins.items():
            for plugin in [p for p in instances if p.socket == socket]:
                instances.remove(plugin)
                await plugin.channel.close()
                log.info("node %s: deregistered DRA plugin %s", self.node_name, driver_name)
                self._on_change(driver_name)


async def _notify(stub: Any, *, registered: bool, error: str) -> bool:
    try:
        await stub.NotifyRegistrationStatus(
            registration.RegistrationStatus(plugin_registered=registered, error=error),
            timeout=REGISTRATION_TIMEOUT,
        )
    except grpc.aio.AioRpcError as err:
        log.info("NotifyRegistrationStatus: %s", err)
        return False
    return True


def _sockets(directory: Path) -> dict[Path, int]:
    """The Unix sockets in the directory, with their inodes (hidden files are skipped, as
    kubelet's plugin watcher skips them)."""
    found: dict[Path, int] = {}
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return found
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISSOCK(info.st_mode):
            found[Path(entry.path)] = info.st_ino
    return found
