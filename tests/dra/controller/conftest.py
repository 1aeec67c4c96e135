"""A real in-process cluster with a `DriverController` over a scriptable fake `Driver` (the
seam the framework is built around); the test plays scheduler and claim controller via the API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from draplane.api import auth, meta
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.dra.controller import ClaimAllocation, Delays, DriverController
from draplane.testing.apistate import wait_for
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster

DRIVER = "driver.example.com"


@dataclass
class FakeDriver:
    """Allocates every claim for the node asked (or `node-0` when immediate)."""

    unsuitable: set[str] = field(default_factory=set)
    allocate_error: str | None = None
    omit_allocation: bool = False
    """Return from `allocate` without setting anything (a broken driver)."""
    fail_in: str = ""
    """`class`, `claim`, `allocate`, `deallocate` or `unsuitable`: raise there."""
    deallocated: list[str] = field(default_factory=list)
    unsuitable_calls: list[list[str]] = field(default_factory=list)

    def _maybe_fail(self, where: str) -> None:
        if self.fail_in == where:
            raise RuntimeError(f"{where} failed")

    async def get_class_parameters(self, resource_class: Obj) -> object:
        self._maybe_fail("class")
        return {"class": meta.name(resource_class)}

    async def get_claim_parameters(
        self, claim: Obj, *, resource_class: Obj, class_parameters: object
    ) -> object:
        self._maybe_fail("claim")
        return {"claim": meta.name(claim)}

    async def allocate(self, claims: list[ClaimAllocation], *, selected_node: str | None) -> None:
        self._maybe_fail("allocate")
        for item in claims:
            if self.omit_allocation:
                continue
            if self.allocate_error is not None:
                item.error = self.allocate_error
                continue
            node = selected_node or "node-0"
            item.allocation = {
                "resourceHandles": [{"driverName": DRIVER, "data": node}],
                "shareable": False,
                "availableOnNodes": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": [node],
                                }
                            ]
                        }
                    ]
                },
            }

    async def deallocate(self, claim: Obj) -> None:
        self._maybe_fail("deallocate")
        self.deallocated.append(meta.name(claim))

    async def unsuitable_nodes(
        self, pod: Obj, *, claims: list[ClaimAllocation], potential_nodes: list[str]
    ) -> None:
        self._maybe_fail("unsuitable")
        self.unsuitable_calls.append([meta.name(item.claim) for item in claims])
        for item in claims:
            item.unsuitable_nodes = [n for n in potential_nodes if n in self.unsuitable]


@dataclass
class Env:
    cluster: Cluster
    admin: Client
    clock: FakeClock
    driver: FakeDriver


def driver_user(name: str = DRIVER) -> UserInfo:
    return auth.driver_user(name)


@pytest.fixture
def cluster_options(clock: FakeClock) -> dict[str, Any]:
    return {"clock": clock}


async def _start_env(
    cluster: Cluster, clock: FakeClock, *, set_reserved_for: bool, delays: Delays | None = None
) -> AsyncIterator[Env]:
    driver = FakeDriver()
    controller = DriverController(
        cluster.client(driver_user()),
        DRIVER,
        driver,
        clock=clock,
        workers=2,
        set_reserved_for=set_reserved_for,
        delays=delays,
    )
    task = asyncio.create_task(controller.run())
    try:
        await wait_for(lambda: _synced(controller), what="controller caches")
        yield Env(cluster, cluster.client(), clock, driver)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.fixture
async def env(cluster: Cluster, clock: FakeClock) -> AsyncIterator[Env]:
    async for started in _start_env(cluster, clock, set_reserved_for=True):
        yield started


@pytest.fixture(
    params=[pytest.param(None, id="default-delays"), pytest.param(2.0, id="recheck-2s")]
)
async def env_recheck(
    request: pytest.FixtureRequest, cluster: Cluster, clock: FakeClock
) -> AsyncIterator[tuple[Env, float]]:
    """The controller with the default delays, then with a configured 2 s recheck delay;
    yields the env and its recheck delay."""
    delays = Delays() if request.param is None else Delays(recheck=request.param)
    async for started in _start_env(cluster, clock, set_reserved_for=True, delays=delays):
        yield started, delays.recheck


@pytest.fixture
async def env_without_reserved_for(cluster: Cluster, clock: FakeClock) -> AsyncIterator[Env]:
    """The controller with `SetReservedFor(false)`: the scheduler reserves, not the driver."""
    async for started in _start_env(cluster, clock, set_reserved_for=False):
        yield started


async def _synced(controller: DriverController) -> bool:
    return controller.has_synced()
