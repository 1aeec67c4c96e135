"""`ExampleDriver`: the control-plane half of `driver.example.com` (the e2e test driver's model).

Parameters come from the objects the class and claim parametersRef name, ConfigMaps (`data`)
or the driver's custom resources `ClassParameters` (cluster-scoped) and `ClaimParameters`
(namespaced) of group `driver.example.com` (`spec.parameters`, CRDs in
examples/classic/driver-parameters-crds.yaml), and reach the node side as `admin_<key>` /
`user_<key>` env values in the resource handle. The allocation state is
rebuilt from the allocated claims of this driver before the first call, so a restart continues.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import cast

import orjson

from draplane.api import kinds, meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.types.resourcev1alpha2 import (
    AllocationResult,
    ResourceClaim,
    ResourceClaimParametersReference,
    ResourceClass,
    ResourceClassParametersReference,
)
from draplane.client.interface import Client
from draplane.dra.controller import ClaimAllocation
from draplane.drivers.example._allocator import AllocationError, Allocator, Grant, Resources

log = logging.getLogger(__name__)

DRIVER_NAME = "driver.example.com"
HOSTNAME_LABEL = "kubernetes.io/hostname"
PARAMETERS_VERSION = "v1alpha1"
CLASS_PARAMETERS = ResourceType(
    DRIVER_NAME, PARAMETERS_VERSION, "classparameters", "ClassParameters", False, "classparameters"
)
CLAIM_PARAMETERS = ResourceType(
    DRIVER_NAME, PARAMETERS_VERSION, "claimparameters", "ClaimParameters", True, "claimparameters"
)
_PARAMETER_KINDS = {"class": CLASS_PARAMETERS, "claim": CLAIM_PARAMETERS}


class ParametersError(Exception):
    """A parametersRef this driver does not support."""


class ExampleDriver:
    """Implements `draplane.dra.controller.Driver`; one instance per driver name."""

    def __init__(
        self,
        client: Client,
        *,
        driver_name: str = DRIVER_NAME,
        resources: Resources | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.driver_name = driver_name
        self.resources = resources or Resources()
        self.allocator = Allocator(self.resources, rng=rng or random.Random())
        self._client = client
        self._lock = asyncio.Lock()
        self._loaded = False

    async def get_class_parameters(self, resource_class: Obj) -> dict[str, str]:
        ref = cast(ResourceClass, resource_class).get("parametersRef")
        if not ref:
            return {}
        return await self._parameters(
            "class", ref, namespace=str(ref.get("namespace") or "default")
        )

    async def get_claim_parameters(
        self, claim: Obj, *, resource_class: Obj, class_parameters: object
    ) -> dict[str, str]:
        ref = (cast(ResourceClaim, claim).get("spec") or {}).get("parametersRef")
        if not ref:
            return {}
        return await self._parameters("claim", ref, namespace=meta.namespace(claim))

    async def _parameters(
        self,
        what: str,
        ref: ResourceClassParametersReference | ResourceClaimParametersReference,
        *,
        namespace: str,
    ) -> dict[str, str]:
        custom = _PARAMETER_KINDS[what]
        name = str(ref.get("name", ""))
        if not ref.get("apiGroup") and ref.get("kind") == "ConfigMap":
            config_map = await self._client.get(kinds.CONFIGMAPS, name, namespace)
            return {str(k): str(v) for k, v in (config_map.get("data") or {}).items()}
        if ref.get("apiGroup") == custom.group and ref.get("kind") == custom.kind:
            obj = await self._client.get(custom, name, namespace if custom.namespaced else "")
            values = (obj.get("spec") or {}).get("parameters") or {}
            return {str(k): str(v) for k, v in values.items()}
        raise ParametersError(
            f"{what} parameters are only supported in APIVersion v1, Kind ConfigMap or "
            f"APIVersion {custom.api_version}, Kind {custom.kind}, "
            f"got: {orjson.dumps(ref).decode()}"
        )

    async def allocate(self, claims: list[ClaimAllocation], *, selected_node: str | None) -> None:
        async with self._lock:
            await self._ensure_loaded()
            nodes = await self._node_names() if selected_node is None else []
            for item in claims:
                uid = meta.uid(item.claim)
                try:
                    grant = self.allocator.allocate(uid, selected_node=selected_node, nodes=nodes)
                except AllocationError as err:
                    item.error = f"failed allocating claim {uid}: {err}"
                    continue
                item.allocation = cast(Obj, self._allocation_result(item, grant))

    async def deallocate(self, claim: Obj) -> None:
        async with self._lock:
            await self._ensure_loaded()
            self.allocator.deallocate(meta.uid(claim))

    async def unsuitable_nodes(
        self, pod: Obj, *, claims: list[ClaimAllocation], potential_nodes: list[str]
    ) -> None:
        async with self._lock:
            await self._ensure_loaded()
            unsuitable = self.allocator.unsuitable_nodes(
                potential_nodes=potential_nodes, claim_count=len(claims)
            )
        for item in claims:
            item.unsuitable_nodes = list(unsuitable)

    def _allocation_result(self, item: ClaimAllocation, grant: Grant) -> AllocationResult:
        claim_parameters = _as_parameters(item.claim_parameters)
        class_parameters = _as_parameters(item.class_parameters)
        env = {f"user_{k.lower()}": v for k, v in claim_parameters.items()}
        env.update({f"admin_{k.lower()}": v for k, v in class_parameters.items()})
        data = {"EnvVars": env, "NodeName": grant.node, "Devices": list(grant.devices)}
        shareable = (
            self.resources.shareable
            or claim_parameters.get("shareable") == "true"
            or class_parameters.get("shareable") == "true"
        )
        result: AllocationResult = {
            "resourceHandles": [
                {"driverName": self.driver_name, "data": orjson.dumps(data).decode()}
            ],
            "shareable": shareable,
        }
        nodes = [grant.node] if grant.node else list(self.resources.nodes)
        if nodes:
            result["availableOnNodes"] = {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": HOSTNAME_LABEL, "operator": "In", "values": nodes}
                        ]
                    }
                ]
            }
        return result

    async def _node_names(self) -> list[str]:
        """Where immediate node-local allocation may land."""
        if self.resources.nodes or not self.resources.node_local:
            return list(self.resources.nodes)
        listed = await self._client.list(kinds.NODES)
        return [meta.name(node) for node in listed.get("items") or []]

    async def _ensure_loaded(self) -> None:
        """Rebuild the allocation state from the API once, before the first decision."""
        if self._loaded:
            return
        listed = await self._client.list(kinds.RESOURCE_CLAIMS)
        for claim in listed.get("items") or []:
            grant = self._grant_of(cast(ResourceClaim, claim))
            if grant is not None:
                self.allocator.restore(meta.uid(claim), grant)
        self._loaded = True
        log.info("driver %s: rebuilt %d allocations", self.driver_name, len(self.allocator.grants))

    def _grant_of(self, claim: ResourceClaim) -> Grant | None:
        status = claim.get("status") or {}
        if status.get("driverName") != self.driver_name or not status.get("allocation"):
            return None
        for handle in status["allocation"].get("resourceHandles") or []:
            if handle.get("driverName") != self.driver_name:
                continue
            try:
                data = orjson.loads(handle.get("data") or "{}")
                return Grant(
                    node=str(data.get("NodeName") or ""),
                    devices=tuple(str(d) for d in data.get("Devices") or []),
                )
            except (orjson.JSONDecodeError, AttributeError, TypeError):
                log.warning(
                    "driver %s: claim %s has unreadable handle data",
                    self.driver_name,
                    meta.key(claim),
                )
        return None


def _as_parameters(value: object) -> dict[str, str]:
    return value if isinstance(value, dict) else {}
