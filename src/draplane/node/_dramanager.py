"""`DRAManager`: prepares and unprepares claims through the kubelet plugins registered with a
node (pkg/kubelet/cm/dra/manager.go), for nodes with a kubelet directory.

Claims are batched per driver: one NodePrepareResources call per driver with the pod's claims
that driver has not prepared yet (the checkpoint says which). A claim is unprepared, again one
call per driver, once no pod on the node uses it any more; only then does it leave the
checkpoint. The CDI device IDs prepared for a container are resolved against the spec files of
the node's CDI directory. One operation runs at a time (kubelet's manager holds a lock too), so
two pods sharing a claim never prepare it twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.kubeletapi import DEFAULT_TIMEOUT, cdi, dra_modules
from draplane.node._checkpoint import Checkpoint, ClaimInfo, Device
from draplane.node._pluginmanager import PluginManager, RegisteredPlugin

log = logging.getLogger(__name__)


class PrepareFailed(Exception):
    """NodePrepareResources or NodeUnprepareResources failed for at least one claim."""


class DRAManager:
    def __init__(self, plugins: PluginManager, checkpoint: Checkpoint, *, cdi_dir: Path) -> None:
        self.plugins = plugins
        self.checkpoint = checkpoint
        self.cdi_dir = cdi_dir
        self.timeout = DEFAULT_TIMEOUT
        self._lock = asyncio.Lock()

    async def prepare(self, pod_uid: str, claims: list[tuple[Obj, str]]) -> dict[str, ClaimInfo]:
        """Prepare the (claim, driver) pairs for the pod; returns the claims' entries by UID.

        Every claim the pod uses is recorded for it, also when some driver failed (so that
        what did get prepared is unprepared with the pod). Raises `PrepareFailed`."""
        async with self._lock:
            return await self._prepare(pod_uid, claims)

    async def _prepare(self, pod_uid: str, claims: list[tuple[Obj, str]]) -> dict[str, ClaimInfo]:
        batches: dict[str, dict[str, Obj]] = {}
        for claim, driver in claims:
            info = self.checkpoint.claim(
                uid=meta.uid(claim), name=meta.name(claim), namespace=meta.namespace(claim)
            )
            info.pods.add(pod_uid)
            if driver not in info.drivers:
                batches.setdefault(driver, {})[meta.uid(claim)] = claim
        failures: list[str] = []
        try:
            for driver, batch in batches.items():
                failures += await self._prepare_batch(driver, list(batch.values()))
        finally:
            self.checkpoint.save()
        if failures:
            raise PrepareFailed("; ".join(failures))
        return {meta.uid(c): self.checkpoint.claims[meta.uid(c)] for c, _ in claims}

    async def _prepare_batch(self, driver: str, claims: list[Obj]) -> list[str]:
        plugin = self._plugin(driver)
        if plugin is None:
            return [f"DRA driver {driver} is not registered"]
        messages, stubs = dra_modules(plugin.service)
        request = messages.NodePrepareResourcesRequest(claims=[_claim(messages, c) for c in claims])
        try:
            response = await stubs.DRAPluginStub(plugin.channel).NodePrepareResources(
                request, timeout=self.timeout
            )
        except grpc.aio.AioRpcError as err:
            return [f"NodePrepareResources failed for driver {driver}: {err.details()}"]
        failures: list[str] = []
        for claim in claims:
            uid = meta.uid(claim)
            if uid not in response.claims:
                failures.append(f"NodePrepareResources left out claim {meta.key(claim)}")
                continue
            result = response.claims[uid]
            if result.error:
                failures.append(f"prepare resource claim {meta.key(claim)}: {result.error}")
                continue
            self.checkpoint.claims[uid].drivers[driver] = tuple(
                Device(
                    tuple(d.request_names),
                    d.pool_name,
                    d.device_name,
                    tuple(d.cdi_device_ids),
                )
                for d in result.devices
            )
            log.info("node %s: %s prepared claim %s", self.plugins.node_name, driver, uid)
        return failures

    async def unprepare_pod(self, pod_uid: str) -> None:
        """The pod no longer uses its claims: unprepare those no other pod uses."""
        await self._release(
            [info for info in self.checkpoint.claims.values() if pod_uid in info.pods],
            {pod_uid},
        )

    async def unprepare_missing(self, live_pods: set[str]) -> None:
        """Unprepare the claims whose pods are all gone from the node (a node restarted after
        they were deleted, or an earlier unprepare failed)."""
        claims = [i for i in self.checkpoint.claims.values() if not i.pods & live_pods]
        await self._release(claims, {p for c in claims for p in c.pods})

    async def _release(self, claims: Iterable[ClaimInfo], gone: set[str]) -> None:
        async with self._lock:
            await self._release_locked(list(claims), gone)

    async def _release_locked(self, claims: list[ClaimInfo], gone: set[str]) -> None:
        batches: dict[str, list[ClaimInfo]] = {}
        changed = False
        for info in claims:
            if info.pods - gone:
                info.pods -= gone
                changed = True
                continue
            if not info.drivers:
                del self.checkpoint.claims[info.uid]
                changed = True
            for driver in info.drivers:
                batches.setdefault(driver, []).append(info)
        failures: list[str] = []
        try:
            for driver, batch in batches.items():
                changed = True
                failures += await self._unprepare_batch(driver, batch)
        finally:
            if changed:
                self.checkpoint.save()
        if failures:
            raise PrepareFailed("; ".join(failures))

    async def _unprepare_batch(self, driver: str, claims: list[ClaimInfo]) -> list[str]:
        plugin = self._plugin(driver)
        if plugin is None:
            return [f"DRA driver {driver} is not registered"]
        messages, stubs = dra_modules(plugin.service)
        request = messages.NodeUnprepareResourcesRequest(
            claims=[messages.Claim(namespace=c.namespace, uid=c.uid, name=c.name) for c in claims]
        )
        try:
            response = await stubs.DRAPluginStub(plugin.channel).NodeUnprepareResources(
                request, timeout=self.timeout
            )
        except grpc.aio.AioRpcError as err:
            return [f"NodeUnprepareResources failed for driver {driver}: {err.details()}"]
        failures: list[str] = []
        for info in claims:
            result = response.claims.get(info.uid)
            if result is None or result.error:
                why = result.error if result is not None else "left out of the response"
                failures.append(f"unprepare resource claim {info.namespace}/{info.name}: {why}")
                continue
            del info.drivers[driver]
            if not info.drivers:
                self.checkpoint.claims.pop(info.uid, None)
            log.info("node %s: %s unprepared claim %s", self.plugins.node_name, driver, info.uid)
        return failures

    def _plugin(self, driver: str) -> RegisteredPlugin | None:
        return self.plugins.plugin(driver)

    def container_env(self, device_ids: list[str]) -> dict[str, str]:
        """The env the CDI devices inject (raises `cdi.CDIError` for unknown IDs)."""
        return cdi.load(self.cdi_dir).resolve(device_ids)


def _claim(messages: Any, claim: Obj) -> Any:
    return messages.Claim(
        namespace=meta.namespace(claim), uid=meta.uid(claim), name=meta.name(claim)
    )
