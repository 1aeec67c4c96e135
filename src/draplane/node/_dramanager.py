"""`DRAManager`: prepares and unprepares claims through the kubelet plugins registered with a
node (pkg/kubelet/cm/dra/manager.go), for nodes with a kubelet directory.

Claims are batched per driver: one NodePrepareResources call per driver with the pod's claims
that driver has not prepared yet (the checkpoint says which). A claim is unprepared, again one
call per driver, once no pod on the node uses it any more; only then does it leave the
checkpoint. The CDI device IDs prepared for a container are resolved against the spec files of
the node's CDI directory. The calls of one driver run one at a time, so two pods sharing a
claim never prepare it twice, while a plugin that hangs (until the 45 s call timeout) holds
back no other driver. A failed call, a timeout, an undecodable response or results for claims
the call did not name fail the pods concerned with a clear message (and a log line).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

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
        self._locks: dict[str, asyncio.Lock] = {}
        """One per driver: its calls and the checkpoint entries they decide on are serialized,
        and a plugin that hangs holds back only the pods that use it."""

    async def prepare(self, pod_uid: str, claims: list[tuple[Obj, str]]) -> dict[str, ClaimInfo]:
        """Prepare the (claim, driver) pairs for the pod; returns the claims' entries by UID.

        Every claim the pod uses is recorded for it, also when some driver failed (so that
        what did get prepared is unprepared with the pod). Raises `PrepareFailed`."""
        by_driver: dict[str, list[Obj]] = {}
        for claim, driver in claims:
            by_driver.setdefault(driver, []).append(claim)
        failures: list[str] = []
        for driver, driver_claims in by_driver.items():
            async with self._lock(driver):
                batch: dict[str, Obj] = {}
                for claim in driver_claims:
                    info = self.checkpoint.claim(
                        uid=meta.uid(claim), name=meta.name(claim), namespace=meta.namespace(claim)
                    )
                    info.pods.add(pod_uid)
                    if driver not in info.drivers:
                        batch[meta.uid(claim)] = claim
                try:
                    if batch:
                        failures += await self._prepare_batch(driver, list(batch.values()))
                finally:
                    self.checkpoint.save()
        if failures:
            raise PrepareFailed("; ".join(failures))
        return {meta.uid(c): self.checkpoint.claims[meta.uid(c)] for c, _ in claims}

    def _lock(self, driver: str) -> asyncio.Lock:
        lock = self._locks.get(driver)
        if lock is None:
            lock = self._locks[driver] = asyncio.Lock()
        return lock

    async def _prepare_batch(self, driver: str, claims: list[Obj]) -> list[str]:
        plugin = self._plugin(driver)
        if plugin is None:
            return [f"DRA driver {driver} is not registered"]
        messages, _ = dra_modules(plugin.service)
        request = messages.NodePrepareResourcesRequest(claims=[_claim(messages, c) for c in claims])
        try:
            response = await self._call(plugin, "NodePrepareResources", request, messages)
        except _CallFailed as err:
            return [self._call_failed("NodePrepareResources", driver, err)]
        failures = self._unknown_claims(
            "NodePrepareResources", driver, response, {meta.uid(c) for c in claims}
        )
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
        batches: dict[str, list[ClaimInfo]] = {}
        changed = False
        for info in claims:
            if info.pods - gone:
                info.pods -= gone
                changed = True
                continue
            if not info.drivers:
                self.checkpoint.claims.pop(info.uid, None)
                changed = True
            for driver in info.drivers:
                batches.setdefault(driver, []).append(info)
        if changed:
            self.checkpoint.save()
        failures: list[str] = []
        for driver, batch in batches.items():
            async with self._lock(driver):
                # While waiting for the driver, a pod may have started to use the claim, or
                # another release may have unprepared it.
                batch = [
                    i
                    for i in batch
                    if not i.pods - gone
                    and driver in i.drivers
                    and self.checkpoint.claims.get(i.uid) is i
                ]
                if not batch:
                    continue
                try:
                    failures += await self._unprepare_batch(driver, batch)
                finally:
                    self.checkpoint.save()
        if failures:
            raise PrepareFailed("; ".join(failures))

    async def _unprepare_batch(self, driver: str, claims: list[ClaimInfo]) -> list[str]:
        plugin = self._plugin(driver)
        if plugin is None:
            return [f"DRA driver {driver} is not registered"]
        messages, _ = dra_modules(plugin.service)
        request = messages.NodeUnprepareResourcesRequest(
            claims=[messages.Claim(namespace=c.namespace, uid=c.uid, name=c.name) for c in claims]
        )
        try:
            response = await self._call(plugin, "NodeUnprepareResources", request, messages)
        except _CallFailed as err:
            return [self._call_failed("NodeUnprepareResources", driver, err)]
        failures = self._unknown_claims(
            "NodeUnprepareResources", driver, response, {c.uid for c in claims}
        )
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

    async def _call(
        self, plugin: RegisteredPlugin, method: str, request: Any, messages: Any
    ) -> Any:
        """One unary call of the plugin's DRA service. The response arrives as bytes and is
        decoded here: grpcio's own decoding of a corrupt response retries it without end."""
        package = messages.DESCRIPTOR.package
        call = plugin.channel.unary_unary(
            f"/{package}.DRAPlugin/{method}",
            request_serializer=type(request).SerializeToString,
            response_deserializer=None,
        )
        try:
            raw = await call(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as err:
            raise _CallFailed(f"{err.code().name}: {err.details()}") from err
        except grpc.aio.UsageError as err:
            raise _CallFailed(str(err)) from err
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            # grpcio cancels the calls of a channel that is closed: the plugin deregistered.
            raise _CallFailed("the plugin deregistered during the call") from None
        try:
            return getattr(messages, f"{method}Response").FromString(raw)
        except DecodeError as err:
            raise _CallFailed(f"undecodable response ({len(raw)} bytes): {err}") from err

    def _call_failed(self, call: str, driver: str, err: Exception) -> str:
        """The failure of a whole call (timeout, plugin gone, undecodable response), logged."""
        message = f"{call} failed for driver {driver}: {err}"
        log.warning("node %s: %s", self.plugins.node_name, message)
        return message

    def _unknown_claims(self, call: str, driver: str, response: Any, asked: set[str]) -> list[str]:
        """Results for claims the call did not name: the plugin is confused, the call fails
        (as kubelet's "returned result for unknown claim UID"); the named ones still count."""
        unknown = sorted(set(response.claims) - asked)
        if not unknown:
            return []
        message = (
            f"{call} of driver {driver} returned result for unknown claim UID {', '.join(unknown)}"
        )
        log.warning("node %s: %s", self.plugins.node_name, message)
        return [message]

    def _plugin(self, driver: str) -> RegisteredPlugin | None:
        return self.plugins.plugin(driver)

    def container_env(self, device_ids: list[str]) -> dict[str, str]:
        """The env the CDI devices inject (raises `cdi.CDIError` for unknown IDs)."""
        return cdi.load(self.cdi_dir).resolve(device_ids)


class _CallFailed(Exception):
    """A DRA call that gave no response to look at."""


def _claim(messages: Any, claim: Obj) -> Any:
    return messages.Claim(
        namespace=meta.namespace(claim), uid=meta.uid(claim), name=meta.name(claim)
    )
