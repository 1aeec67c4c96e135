"""`SliceWiper`: a node deletes its ResourceSlices of a DRA driver once no kubelet plugin of
that driver is registered with it, after a grace delay (kubelet's 30 s wiping delay, cancelled
when the driver registers again in time), as pkg/kubelet/cm/dra/plugin does. At start the node
treats every driver with slices on it as gone until it registers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.clock import Clock

log = logging.getLogger(__name__)

WIPE_DELAY_SECONDS = 30.0


class SliceWiper:
    def __init__(
        self, client: Client, node_name: str, *, clock: Clock, delay: float = WIPE_DELAY_SECONDS
    ) -> None:
        self._client = client
        self.node_name = node_name
        self._clock = clock
        self.delay = delay
        self._known: set[str] = set()
        self._pending: dict[str, asyncio.Task[None]] = {}

    async def start(self, registered: set[str]) -> None:
        """Learn the drivers that have slices on this node (those not registered are wiped
        unless they register within the delay)."""
        try:
            self._known |= {str(s["spec"].get("driver")) for s in await self._slices()}
        except errors.StatusError as err:
            log.warning("node %s: listing its ResourceSlices: %s", self.node_name, err)
        self.sync(registered)

    def sync(self, registered: set[str]) -> None:
        """The registered drivers now: start the delay of those gone, cancel it for those
        back."""
        self._known |= registered
        for driver in self._known - registered:
            if driver not in self._pending:
                self._pending[driver] = asyncio.create_task(self._wipe(driver))
        for driver in registered & set(self._pending):
            self._pending.pop(driver).cancel()

    async def close(self) -> None:
        tasks = list(self._pending.values())
        self._pending.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _slices(self) -> list[Obj]:
        listed = await self._client.list(
            kinds.RESOURCE_SLICES, field_selector=f"spec.nodeName={self.node_name}"
        )
        return list(listed.get("items") or [])

    async def _wipe(self, driver: str) -> None:
        await self._clock.sleep(self.delay)
        # Not cancelled from here on: the driver stays gone until it registers again.
        self._pending.pop(driver, None)
        self._known.discard(driver)
        try:
            for slice_ in await self._slices():
                if (slice_.get("spec") or {}).get("driver") != driver:
                    continue
                with contextlib.suppress(errors.StatusError):
                    await self._client.delete(
                        kinds.RESOURCE_SLICES,
                        meta.name(slice_),
                        preconditions={"uid": meta.uid(slice_)},
                    )
            log.info("node %s: deleted the ResourceSlices of driver %s", self.node_name, driver)
        except errors.StatusError as err:
            log.warning("node %s: wiping slices of %s: %s", self.node_name, driver, err)
