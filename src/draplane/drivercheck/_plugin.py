"""`PluginClient`: the harness's own kubelet side towards one registered DRA plugin: it finds
the plugin's registration socket in the node's `plugins_registry/` by driver name (`GetInfo`),
picks the service as kubelet does and calls NodePrepareResources / NodeUnprepareResources
directly, with kubelet's timeouts (GetInfo 1 s, DRA calls 45 s)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from draplane.kubeletapi import (
    DEFAULT_TIMEOUT,
    DRA_PLUGIN_TYPE,
    DRA_SERVICES,
    dra_modules,
    registration,
    registration_grpc,
)

GET_INFO_TIMEOUT = 1.0


class PluginNotFound(Exception):
    pass


@dataclass(frozen=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str


@dataclass
class Registration:
    socket: Path
    info: Any
    """The plugin's `PluginInfo`."""
    others: list[str]
    """What the other sockets of the directory answered (for the evidence)."""


async def find_plugin(registry_dir: Path, driver: str) -> Registration:
    """The registration socket whose GetInfo names `driver`."""
    others: list[str] = []
    for socket in _sockets(registry_dir):
        channel = grpc.aio.insecure_channel(f"unix://{socket}")
        try:
            stub = registration_grpc.RegistrationStub(channel)
            info = await stub.GetInfo(registration.InfoRequest(), timeout=GET_INFO_TIMEOUT)
        except grpc.aio.AioRpcError as err:
            others.append(f"{socket.name}: GetInfo: {err.code().name}: {err.details()}")
            continue
        finally:
            await channel.close()
        if info.name == driver:
            return Registration(socket, info, others)
        others.append(f"{socket.name}: driver {info.name!r}")
    raise PluginNotFound(
        f"no registration socket in {registry_dir} answers GetInfo with name {driver!r}"
        + (f" ({'; '.join(others)})" if others else "")
    )


def common_service(supported: list[str]) -> str | None:
    """The first of the plugin's services a draplane node speaks, as kubelet chooses."""
    return next((s for s in supported if s in DRA_SERVICES), None)


class PluginClient:
    """DRA calls to one plugin endpoint over `service` (e.g. `v1.DRAPlugin`)."""

    def __init__(self, endpoint: str, service: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.endpoint = endpoint
        self.service = service
        self.timeout = timeout
        self._messages, stubs = dra_modules(service)
        self._channel = grpc.aio.insecure_channel(f"unix://{endpoint}")
        self._stub = stubs.DRAPluginStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    def _claims(self, refs: list[ClaimRef]) -> list[Any]:
        return [self._messages.Claim(namespace=r.namespace, name=r.name, uid=r.uid) for r in refs]

    async def prepare(self, refs: list[ClaimRef]) -> dict[str, Any]:
        """Claim UID -> its NodePrepareResourceResponse; raises grpc.aio.AioRpcError."""
        request = self._messages.NodePrepareResourcesRequest(claims=self._claims(refs))
        response = await self._stub.NodePrepareResources(request, timeout=self.timeout)
        return dict(response.claims)

    async def unprepare(self, refs: list[ClaimRef]) -> dict[str, Any]:
        request = self._messages.NodeUnprepareResourcesRequest(claims=self._claims(refs))
        response = await self._stub.NodeUnprepareResources(request, timeout=self.timeout)
        return dict(response.claims)


def is_dra_plugin(info: Any) -> bool:
    return bool(info.type == DRA_PLUGIN_TYPE)


def devices_of(result: Any) -> list[tuple[tuple[str, ...], str, str, tuple[str, ...]]]:
    """A prepare result's devices as comparable tuples (requests, pool, device, CDI IDs)."""
    return sorted(
        (tuple(d.request_names), d.pool_name, d.device_name, tuple(d.cdi_device_ids))
        for d in result.devices
    )


def _sockets(directory: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError:
        return []
    return [
        Path(e.path)
        for e in entries
        if not e.name.startswith(".") and stat.S_ISSOCK(e.stat(follow_symlinks=False).st_mode)
    ]
