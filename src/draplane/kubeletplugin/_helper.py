"""`Helper`: runs a DRA driver's kubelet plugin, as upstream's `kubeletplugin.Start` does.

It serves the DRA service (v1 and v1beta1) on `<kubelet dir>/plugins/<driver>/dra.sock`, then
the registration service on `<kubelet dir>/plugins_registry/<driver>-reg.sock` (the kubelet
dials it, asks GetInfo and registers the plugin), publishes the node's ResourceSlices with the
node's client, and writes the CDI spec files of prepared claims into `<kubelet dir>/cdi/`.
Stopping removes both sockets, which deregisters the plugin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import grpc.aio

from draplane.api import kinds
from draplane.api.types import ResourceSliceSpec
from draplane.client.interface import Client
from draplane.kubeletapi import (
    CDI_DIR,
    DRA_SERVICES,
    PLUGINS_DIR,
    REGISTRY_DIR,
    cdi,
    dra_modules,
    registration_grpc,
)
from draplane.kubeletplugin._servers import DRAServicer, RegistrationServicer, RegistrationStatus
from draplane.kubeletplugin._slices import PublishResult, SlicePublisher
from draplane.kubeletplugin._types import DRAPlugin

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 1.0


@dataclass(frozen=True)
class CDISpecs:
    """The CDI spec files of one driver: one file per prepared claim, so that unpreparing
    removes exactly what preparing added."""

    directory: Path
    kind: str
    """`<vendor>/<class>`, e.g. `driver.example.com/gpu`."""

    def write_claim(self, claim_uid: str, devices: dict[str, dict[str, str]]) -> dict[str, str]:
        """Write the claim's spec: per device name the env it injects. Returns the CDI device
        ID of each device (`<kind>=claim-<uid>-<device>`)."""
        names = {device: f"claim-{claim_uid}-{device}" for device in devices}
        content = cdi.spec(self.kind, {names[d]: env for d, env in devices.items()})
        cdi.write_spec(self.directory, self._file(claim_uid), content)
        return {device: cdi.device_id(self.kind, name) for device, name in names.items()}

    def remove_claim(self, claim_uid: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.directory / self._file(claim_uid)).unlink()

    def _file(self, claim_uid: str) -> str:
        return f"{self.kind.replace('/', '-')}_claim-{claim_uid}.json"


@dataclass
class Helper:
    """One driver's kubelet plugin on one node. Build it, then `await start()`."""

    plugin: DRAPlugin
    driver_name: str
    node_name: str
    client: Client
    """The node's client (`system:node:<name>`): reads claims, writes the node's slices."""
    kubelet_dir: Path
    """The node's kubelet root directory (`<--kubelet-dir>/<node>` of a draplane node)."""
    services: tuple[str, ...] = DRA_SERVICES
    """The DRA services offered, in preference (`PluginInfo.supported_versions`)."""
    cdi_kind: str = ""
    """The CDI kind of `cdi` (default `<driver>/claim`)."""
    claims: kinds.ResourceType = kinds.RESOURCE_CLAIMS_V1
    _servers: list[grpc.aio.Server] = field(default_factory=list)
    _registration: RegistrationServicer | None = None
    _publisher: SlicePublisher | None = None

    @property
    def registration_socket(self) -> Path:
        return self.kubelet_dir / REGISTRY_DIR / f"{self.driver_name}-reg.sock"

    @property
    def endpoint(self) -> Path:
        return self.kubelet_dir / PLUGINS_DIR / self.driver_name / "dra.sock"

    @property
    def cdi(self) -> CDISpecs:
        return CDISpecs(self.kubelet_dir / CDI_DIR, self.cdi_kind or f"{self.driver_name}/claim")

    @property
    def registration_status(self) -> RegistrationStatus | None:
        """What the kubelet last said about the registration (None: nothing yet)."""
        return self._registration.status if self._registration is not None else None

    async def start(self) -> None:
        lock = asyncio.Lock()
        dra = grpc.aio.server()
        # Advertised services this library does not implement are not served (a test of the
        # kubelet's choice can offer them).
        for service in (s for s in self.services if s in DRA_SERVICES):
            messages, stubs = dra_modules(service)
            servicer = DRAServicer(
                messages, plugin=self.plugin, client=self.client, lock=lock, claims=self.claims
            )
            stubs.add_DRAPluginServicer_to_server(servicer, dra)
        await self._serve(dra, self.endpoint)
        self._registration = RegistrationServicer(
            driver_name=self.driver_name, endpoint=str(self.endpoint), services=self.services
        )
        registrar = grpc.aio.server()
        registration_grpc.add_RegistrationServicer_to_server(self._registration, registrar)
        await self._serve(registrar, self.registration_socket)
        log.info("%s: kubelet plugin of node %s started", self.driver_name, self.node_name)

    async def _serve(self, server: grpc.aio.Server, socket: Path) -> None:
        socket.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            socket.unlink()  # a socket left by an earlier run
        server.add_insecure_port(f"unix://{socket}")
        await server.start()
        self._servers.append(server)

    async def wait_registered(self, timeout: float = 30.0) -> RegistrationStatus:
        """Until the kubelet has reported on the registration."""
        assert self._registration is not None, "start() first"
        await asyncio.wait_for(self._registration.notified.wait(), timeout)
        assert self._registration.status is not None
        return self._registration.status

    async def publish_resources(self, slices: list[ResourceSliceSpec]) -> PublishResult:
        """Make the node's pool (named after the node, `nodeName` set, owned by the Node) of
        this driver consist of these ResourceSlice specs."""
        if self._publisher is None:
            node = await self.client.get(kinds.NODES, self.node_name)
            self._publisher = SlicePublisher(
                self.client,
                driver_name=self.driver_name,
                pool=self.node_name,
                node_name=self.node_name,
                owner=node,
            )
        return await self._publisher.publish(slices)

    async def stop(self) -> None:
        """Stop serving (registration first) and remove the sockets: the kubelet deregisters
        the plugin. The slices stay; the kubelet wipes them once no plugin of the driver is
        registered."""
        for server, socket in reversed(
            list(zip(self._servers, (self.endpoint, self.registration_socket), strict=False))
        ):
            await server.stop(STOP_GRACE_SECONDS)
            with contextlib.suppress(FileNotFoundError):
                socket.unlink()
        self._servers.clear()
