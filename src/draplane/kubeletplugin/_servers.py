"""The gRPC services a kubelet plugin serves: `Registration` on its socket in the kubelet's
registry directory, and `DRAPlugin` (v1 and v1beta1, one implementation over either's
messages) on its own socket.

NodePrepareResources reads each claim from the API by namespace and name and checks the UID the
kubelet named (a claim deleted and created again under the same name must not be prepared),
then hands the claims to the driver; NodeUnprepareResources passes the kubelet's claim
references as they are. Driver calls are serialized.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.kubeletapi import DRA_PLUGIN_TYPE, registration
from draplane.kubeletplugin._types import DRAPlugin, NamespacedObject, PrepareResult

log = logging.getLogger(__name__)


@dataclass
class RegistrationStatus:
    """What the kubelet said in NotifyRegistrationStatus."""

    plugin_registered: bool
    error: str


class RegistrationServicer:
    """pluginregistration.Registration for one DRA driver."""

    def __init__(self, *, driver_name: str, endpoint: str, services: tuple[str, ...]) -> None:
        self.driver_name = driver_name
        self.endpoint = endpoint
        self.services = services
        self.status: RegistrationStatus | None = None
        self.notified = asyncio.Event()

    async def GetInfo(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return registration.PluginInfo(
            type=DRA_PLUGIN_TYPE,
            name=self.driver_name,
            endpoint=self.endpoint,
            supported_versions=list(self.services),
        )

    async def NotifyRegistrationStatus(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        self.status = RegistrationStatus(bool(request.plugin_registered), str(request.error))
        if not request.plugin_registered:
            log.error(
                "%s: the kubelet refused the registration: %s", self.driver_name, request.error
            )
        else:
            log.info("%s: registered with the kubelet", self.driver_name)
        self.notified.set()
        return registration.RegistrationStatusResponse()


class DRAServicer:
    """DRAPlugin of one API version (`messages`: its generated message module)."""

    def __init__(
        self,
        messages: Any,
        *,
        plugin: DRAPlugin,
        client: Client,
        lock: asyncio.Lock,
        claims: kinds.ResourceType = kinds.RESOURCE_CLAIMS_V1,
    ) -> None:
        self._messages = messages
        self._plugin = plugin
        self._client = client
        self._lock = lock
        self._claims = claims

    async def NodePrepareResources(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        response = self._messages.NodePrepareResourcesResponse()
        found: list[Obj] = []
        for ref in request.claims:
            try:
                found.append(await self._claim(ref))
            except _ClaimError as err:
                response.claims[ref.uid].error = str(err)
        if found:
            async with self._lock:
                try:
                    results = await self._plugin.prepare_resource_claims(found)
                except Exception as err:
                    log.exception("prepare resource claims")
                    await context.abort(grpc.StatusCode.UNKNOWN, f"prepare resource claims: {err}")
            for claim in found:
                result = results.get(meta.uid(claim))
                if result is not None:
                    self._fill(response.claims[meta.uid(claim)], result)
        return response

    def _fill(self, entry: Any, result: PrepareResult) -> None:
        if result.error:
            entry.error = result.error
            return
        for device in result.devices:
            entry.devices.append(
                self._messages.Device(
                    request_names=list(device.requests),
                    pool_name=device.pool_name,
                    device_name=device.device_name,
                    cdi_device_ids=list(device.cdi_device_ids),
                )
            )

    async def NodeUnprepareResources(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        response = self._messages.NodeUnprepareResourcesResponse()
        refs = [NamespacedObject(c.namespace, c.name, c.uid) for c in request.claims]
        async with self._lock:
            try:
                results = await self._plugin.unprepare_resource_claims(refs)
            except Exception as err:
                log.exception("unprepare resource claims")
                await context.abort(grpc.StatusCode.UNKNOWN, f"unprepare resource claims: {err}")
        for ref in refs:
            if ref.uid in results:
                response.claims[ref.uid].error = results[ref.uid]
        return response

    async def _claim(self, ref: Any) -> Obj:
        try:
            claim = await self._client.get(self._claims, ref.name, ref.namespace)
        except errors.StatusError as err:
            raise _ClaimError(f"retrieve claim {ref.namespace}/{ref.name}: {err}") from err
        if meta.uid(claim) != ref.uid:
            raise _ClaimError(
                f"claim {ref.namespace}/{ref.name}: UID mismatch: expected {ref.uid}, "
                f"got {meta.uid(claim)}"
            )
        if not (claim.get("status") or {}).get("allocation"):
            raise _ClaimError(f"claim {ref.namespace}/{ref.name} is not allocated")
        return claim


class _ClaimError(Exception):
    pass
