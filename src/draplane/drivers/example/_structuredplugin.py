"""`StructuredNodePlugin`: the kubelet-plugin half of the example driver in structured mode
(resource.k8s.io/v1), one per node.

On start it publishes the node's pool (`SlicePublisher`, through the node's own client, so
the node authorizer lets it write only its own slices) and republishes when `set_profile`
changes the devices; `stop` deletes them. NodePrepareResources works from the claim's
allocation alone: this driver's `devices.results` become CDI ids `driver.example.com/gpu=<dev>`
with the env of the opaque config scoped to their requests (`draplane.api.deviceconfig`), and
the claim's `status.devices` gets one entry per prepared device (DRAResourceClaimDeviceStatus is
beta and on in 1.36) with a `Ready` condition, the device's CDI ids and env as `data` and, for
a network-attached device, `networkData`. That write goes through `status_client`, the driver's
own identity on this node (its kubelet-plugin service account with a token bound to the node:
the API server's `resourceclaims/driver` check allows it `associated-node:update` for this
driver's entries only; `status_clients` asks for that token); without one it is tried with the
node's client, which may not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from draplane.api import errors, meta
from draplane.api.deviceconfig import PreparedDevice, prepared_devices
from draplane.api.kinds import RESOURCE_GROUP, ResourceType
from draplane.api.meta import Obj
from draplane.api.types import AllocatedDeviceStatus, NetworkDeviceData, ResourceSliceSpec
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock, format_time
from draplane.drivers.example._devices import (
    NETWORK_POOL,
    DeviceProfile,
    network_slice_specs,
    node_slice_specs,
)
from draplane.drivers.example._driver import DRIVER_NAME
from draplane.drivers.example._nodeplugin import PrepareError
from draplane.drivers.example._plugintoken import StatusClientSource
from draplane.kubeletplugin import SlicePublisher

log = logging.getLogger(__name__)

SliceSource = Callable[[str], list[ResourceSliceSpec]]
"""A node name -> the ResourceSlice specs (without `pool`) of the driver's pool on that node:
what a fleet profile gives the plugin instead of a `DeviceProfile`."""

RESOURCE_CLAIMS_V1 = ResourceType(
    RESOURCE_GROUP,
    "v1",
    "resourceclaims",
    "ResourceClaim",
    True,
    "resourceclaim",
    (),
    ("status",),
)


@dataclass
class StructuredNodePlugin:
    """Implements `draplane.dra.kubeletplugin.NodePlugin` and `SlicePublishingPlugin`."""

    node_name: str
    driver_name: str = DRIVER_NAME
    profile: DeviceProfile = field(default_factory=DeviceProfile)
    slices: SliceSource | None = None
    """The node's slice specs from elsewhere (a fleet profile); `profile` when None."""
    write_device_status: bool = True
    status_client: Client | None = None
    """The driver's own identity on this node for `status.devices` writes."""
    status_client_for: StatusClientSource | None = None
    """Without `status_client`: asked for it on `start`, with the Node (`status_clients`)."""
    clock: Clock = REAL_CLOCK
    prepared: dict[str, tuple[PreparedDevice, ...]] = field(default_factory=dict)
    """Claim UID -> what was prepared (the plugin's checkpoint)."""
    _client: Client | None = None
    _publisher: SlicePublisher | None = None

    async def start(self, client: Client, node: Obj) -> None:
        """Publish this node's slices as the node (`client` acts as `system:node:<name>`)."""
        self._client = client
        if self.status_client is None and self.status_client_for is not None:
            self.status_client = await self.status_client_for(node)
        self._publisher = SlicePublisher(
            client,
            driver_name=self.driver_name,
            pool=self.node_name,
            node_name=self.node_name,
            owner=node,
        )
        await self._publisher.publish(self._specs())

    def _specs(self) -> list[ResourceSliceSpec]:
        if self.slices is not None:
            return self.slices(self.node_name)
        return node_slice_specs(self.driver_name, self.node_name, self.profile)

    async def set_profile(self, profile: DeviceProfile) -> None:
        """The devices changed: republish the pool."""
        self.profile = profile
        self.slices = None
        if self._publisher is not None:
            await self._publisher.publish(self._specs())

    async def stop(self) -> None:
        """The plugin goes away: delete its slices."""
        if self._publisher is not None:
            await self._publisher.remove()

    async def prepare(self, claim: Obj) -> list[str]:
        uid = meta.uid(claim)
        known = self.prepared.get(uid)
        if known is None:
            devices = tuple(prepared_devices(claim, self.driver_name))
            if not devices:
                raise PrepareError(
                    f"claim {meta.key(claim)} has no devices of driver {self.driver_name}"
                )
            foreign = sorted({d.pool for d in devices if d.pool not in self._pools()})
            if foreign:
                raise PrepareError(
                    f"claim {meta.key(claim)}: pool {foreign[0]!r} is not available "
                    f"on node {self.node_name!r}"
                )
            self.prepared[uid] = known = devices
            await self._write_status(claim, devices)
        return [cdi for d in known for cdi in d.cdi_device_ids]

    async def unprepare(self, claim: Obj) -> None:
        self.prepared.pop(meta.uid(claim), None)

    def _pools(self) -> set[str]:
        return {self.node_name, NETWORK_POOL}

    async def _write_status(self, claim: Obj, devices: tuple[PreparedDevice, ...]) -> None:
        """Add this driver's `status.devices` entries (best effort: a refused write is logged,
        preparing does not depend on it)."""
        client = self.status_client or self._client
        if not self.write_device_status or client is None:
            return
        try:
            current = await client.get(RESOURCE_CLAIMS_V1, meta.name(claim), meta.namespace(claim))
            if meta.uid(current) != meta.uid(claim):
                return
            updated = meta.deep_copy(current)
            status = updated.setdefault("status", {})
            entries = [
                e for e in status.get("devices") or [] if e.get("driver") != self.driver_name
            ]
            now = format_time(self.clock.now())
            entries += [device_status(self.driver_name, d, now=now) for d in devices]
            status["devices"] = entries
            await client.update(RESOURCE_CLAIMS_V1, updated, subresource="status")
        except errors.StatusError as err:
            log.info("claim %s: status.devices not written: %s", meta.key(claim), err)
            if err.code == 403:
                # This identity may not write them (a node, not the driver's service account):
                # stop asking on every claim.
                self.write_device_status = False


def device_status(driver_name: str, device: PreparedDevice, *, now: str) -> AllocatedDeviceStatus:
    """One AllocatedDeviceStatus: `Ready` and what the container gets."""
    entry: AllocatedDeviceStatus = {
        "driver": driver_name,
        "pool": device.pool,
        "device": device.device,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Prepared",
                "message": "device prepared by the kubelet plugin",
                "lastTransitionTime": now,
            }
        ],
        "data": {"cdiDeviceIDs": list(device.cdi_device_ids), "env": dict(device.env)},
    }
    if device.share_id:
        entry["shareID"] = device.share_id
    if device.pool == NETWORK_POOL:
        entry["networkData"] = network_data(device.device)
    return entry


def network_data(device: str) -> NetworkDeviceData:
    """NetworkDeviceData of a network-attached device: an interface named after the device and
    an address derived from its name (canonical CIDR spelling, host bits set)."""
    index = sum(device.encode()) % 250 + 1
    return {
        "interfaceName": f"net-{device}"[:256],
        "ips": [f"10.99.0.{index}/24"],
        "hardwareAddress": f"02:00:00:00:00:{index:02x}",
    }


def structured_node_plugin_factory(
    driver_name: str = DRIVER_NAME,
    profile: DeviceProfile | None = None,
    *,
    clock: Clock = REAL_CLOCK,
    status_client_for: StatusClientSource | None = None,
    slices: SliceSource | None = None,
) -> Callable[[str], StructuredNodePlugin]:
    """What to register in a NodePluginRegistry for this driver in structured mode;
    `status_client_for(node)` gives the driver's client on that node for `status.devices`
    (`status_clients`); `slices` replaces `profile` as the source of each node's slices."""
    chosen = profile or DeviceProfile()

    def build(node_name: str) -> StructuredNodePlugin:
        return StructuredNodePlugin(
            node_name=node_name,
            driver_name=driver_name,
            profile=chosen,
            slices=slices,
            clock=clock,
            status_client_for=status_client_for,
        )

    return build


async def publish_network_pool(
    client: Client,
    profile: DeviceProfile,
    *,
    driver_name: str = DRIVER_NAME,
    node_selector: Obj | None = None,
) -> SlicePublisher:
    """The driver controller's part in structured mode: the network-attached pool
    (`allNodes`, or `nodeSelector`), written as the driver's controller identity."""
    publisher = SlicePublisher(client, driver_name=driver_name, pool=NETWORK_POOL)
    await publisher.publish(network_slice_specs(driver_name, profile, node_selector=node_selector))
    return publisher


class NetworkPoolController:
    """The driver's controller side in structured mode: publishes the network-attached pool
    once and keeps running (a component of `draplane up` / `draplane driver example`)."""

    def __init__(
        self,
        client: Client,
        profile: DeviceProfile,
        *,
        driver_name: str = DRIVER_NAME,
        node_selector: Obj | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._client = client
        self.profile = profile
        self.driver_name = driver_name
        self._node_selector = node_selector
        self._clock = clock
        self._published = False

    def has_synced(self) -> bool:
        return self._published

    async def run(self) -> None:
        while not self._published:
            try:
                await publish_network_pool(
                    self._client,
                    self.profile,
                    driver_name=self.driver_name,
                    node_selector=self._node_selector,
                )
                self._published = True
            except errors.StatusError as err:
                log.warning(
                    "%s: publishing the network-attached pool failed: %s", self.driver_name, err
                )
                await self._clock.sleep(1.0)
        await asyncio.Event().wait()
