"""`ExampleNodePlugin`: the kubelet-plugin half of the example driver on one node.

Preparing a claim records the CDI device names its container would get
(`driver.example.com/gpu=dev-3`) and the env values from the resource handle. Everything it
needs comes from the claim's allocation, so it holds no state that the API cannot give back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import orjson

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.types.resourcev1alpha2 import ResourceClaim
from draplane.dra.controller import NodePluginFactory
from draplane.drivers.example._driver import DRIVER_NAME

CDI_KIND = "gpu"


class PrepareError(Exception):
    """The claim's allocation cannot be used on this node."""


@dataclass(frozen=True)
class PreparedClaim:
    claim_uid: str
    devices: tuple[str, ...]
    """CDI device names, `<driver>/gpu=<device>`."""
    env: dict[str, str]


@dataclass
class ExampleNodePlugin:
    """Implements `draplane.dra.controller.NodePlugin` for one node."""

    node_name: str
    driver_name: str = DRIVER_NAME
    prepared: dict[str, PreparedClaim] = field(default_factory=dict)
    """Claim UID -> what was prepared (the plugin's checkpoint)."""

    async def prepare(self, claim: Obj) -> list[str]:
        uid = meta.uid(claim)
        known = self.prepared.get(uid)
        if known is not None:
            return list(known.devices)
        data = self._handle_data(claim)
        node = str(data.get("NodeName") or "")
        if node and node != self.node_name:
            raise PrepareError(
                f"claim {meta.key(claim)} is allocated on node {node!r}, not {self.node_name!r}"
            )
        devices = tuple(
            f"{self.driver_name}/{CDI_KIND}={device}" for device in data.get("Devices") or []
        )
        env = {str(k): str(v) for k, v in (data.get("EnvVars") or {}).items()}
        self.prepared[uid] = PreparedClaim(claim_uid=uid, devices=devices, env=env)
        return list(devices)

    async def unprepare(self, claim: Obj) -> None:
        self.prepared.pop(meta.uid(claim), None)

    def _handle_data(self, claim: Obj) -> Obj:
        allocation = (cast(ResourceClaim, claim).get("status") or {}).get("allocation") or {}
        for handle in allocation.get("resourceHandles") or []:
            if handle.get("driverName") == self.driver_name:
                try:
                    data = orjson.loads(handle.get("data") or "{}")
                except orjson.JSONDecodeError as err:
                    raise PrepareError(f"claim {meta.key(claim)}: bad handle data: {err}") from err
                if isinstance(data, dict):
                    return data
        raise PrepareError(f"claim {meta.key(claim)} has no resource handle of {self.driver_name}")


def node_plugin_factory(driver_name: str = DRIVER_NAME) -> NodePluginFactory:
    """What to register in a NodePluginRegistry for this driver."""

    def build(node_name: str) -> ExampleNodePlugin:
        return ExampleNodePlugin(node_name=node_name, driver_name=driver_name)

    return build
