"""`ExampleKubeletPlugin`: the example driver's node half as a real kubelet plugin, built on
`draplane.kubeletplugin` (structured mode, resource.k8s.io/v1), for nodes with a kubelet
directory: `KubeletPluginRunner` serves it on one node, as one DaemonSet pod of the driver would.

Preparing a claim works from its allocation alone (`deviceconfig.prepared_devices`): this
driver's devices on the node's pool or the network-attached pool, each getting a CDI device of
the claim's spec (`driver.example.com/gpu=claim-<uid>-<device>`) whose env is the device's
(`GPU_DEVICE_<n>` and the opaque config's variables). Unpreparing removes the claim's spec.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from draplane.api import errors, meta
from draplane.api.deviceconfig import prepared_devices
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.drivers.example._devices import NETWORK_POOL, DeviceProfile, node_slice_specs
from draplane.drivers.example._driver import DRIVER_NAME
from draplane.drivers.example._nodeplugin import CDI_KIND
from draplane.kubeletapi import CDI_DIR
from draplane.kubeletplugin import CDISpecs, Device, Helper, NamespacedObject, PrepareResult

log = logging.getLogger(__name__)


@dataclass
class ExampleKubeletPlugin:
    """Implements `draplane.kubeletplugin.DRAPlugin` for one node."""

    node_name: str
    cdi: CDISpecs
    driver_name: str = DRIVER_NAME
    devices: frozenset[str] = frozenset()
    """The devices of the node's pool (empty: not checked): others are refused, as upstream's
    example driver refuses a device that is not allocatable."""

    async def prepare_resource_claims(self, claims: list[Obj]) -> dict[str, PrepareResult]:
        return {meta.uid(claim): self._prepare(claim) for claim in claims}

    def _prepare(self, claim: Obj) -> PrepareResult:
        devices = prepared_devices(claim, self.driver_name)
        if not devices:
            return PrepareResult(
                error=f"claim {meta.key(claim)} has no devices of driver {self.driver_name}"
            )
        unknown = sorted(
            d.device for d in devices if d.pool == self.node_name and d.device not in self.devices
        )
        if self.devices and unknown:
            return PrepareResult(
                error=f"claim {meta.key(claim)}: device {unknown[0]!r} is not allocatable on "
                f"node {self.node_name!r}"
            )
        foreign = sorted({d.pool for d in devices} - {self.node_name, NETWORK_POOL})
        if foreign:
            return PrepareResult(
                error=f"claim {meta.key(claim)}: pool {foreign[0]!r} is not available on node "
                f"{self.node_name!r}"
            )
        env: dict[str, dict[str, str]] = {}
        for device in devices:
            env.setdefault(device.device, {}).update(device.env)
        ids = self.cdi.write_claim(meta.uid(claim), env)
        return PrepareResult(
            devices=tuple(Device(d.pool, d.device, (d.request,), (ids[d.device],)) for d in devices)
        )

    async def unprepare_resource_claims(self, claims: list[NamespacedObject]) -> dict[str, str]:
        for claim in claims:
            self.cdi.remove_claim(claim.uid)
        return {claim.uid: "" for claim in claims}


@dataclass
class KubeletPluginRunner:
    """Serves the example kubelet plugin on node `node_name` (its kubelet directory
    `kubelet_dir`, `client` acting as the node) and publishes the node's pool, until
    cancelled; synced once the pool is published."""

    client: Client
    node_name: str
    kubelet_dir: Path
    profile: DeviceProfile
    driver_name: str = DRIVER_NAME
    clock: Clock = REAL_CLOCK
    _published: bool = False

    def has_synced(self) -> bool:
        return self._published

    async def run(self) -> None:
        cdi = CDISpecs(self.kubelet_dir / CDI_DIR, f"{self.driver_name}/{CDI_KIND}")
        specs = node_slice_specs(self.driver_name, self.node_name, self.profile)
        names = frozenset(str(d["name"]) for spec in specs for d in spec.get("devices") or [])
        plugin = ExampleKubeletPlugin(self.node_name, cdi, self.driver_name, names)
        helper = Helper(
            plugin,
            driver_name=self.driver_name,
            node_name=self.node_name,
            client=self.client,
            kubelet_dir=self.kubelet_dir,
            cdi_kind=cdi.kind,
        )
        await helper.start()
        try:
            while not self._published:
                try:
                    await helper.publish_resources(specs)
                    self._published = True
                except errors.StatusError as err:
                    # The node may not have registered its Node yet.
                    log.info(
                        "%s on %s: publishing slices: %s", self.driver_name, self.node_name, err
                    )
                    await self.clock.sleep(1.0)
            await asyncio.Event().wait()
        finally:
            await helper.stop()
