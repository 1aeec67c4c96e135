"""Fixtures for the controller tests: a real in-process cluster and a way to seed it.

`seed(*objects)` creates builder objects through the API in order. The API server assigns new
UIDs, so references to earlier objects' builder UIDs (ownerReferences, status.reservedFor) are
rewritten; `status` is written through the status subresource; a builder deletionTimestamp
becomes a DELETE (give the object a finalizer or a node so that it stays).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from prometheus_client import CollectorRegistry

from draplane.api import kinds, meta
from draplane.api.auth import RESOURCE_CLAIM_CONTROLLER, UserInfo
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.client.ratelimit import RateLimiter
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.testing.cluster import Cluster, start_cluster

Seed = Callable[..., Awaitable[dict[str, Obj]]]


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    started = await start_cluster()
    try:
        yield started
    finally:
        await started.stop()


def _remap(obj: Obj, uids: dict[str, str]) -> Obj:
    for ref in meta.owner_references(obj):
        ref["uid"] = uids.get(ref["uid"], ref["uid"])
    for entry in (obj.get("status") or {}).get("reservedFor") or []:
        entry["uid"] = uids.get(entry["uid"], entry["uid"])
    return obj


async def seed_objects(client: Client, *objects: Obj) -> dict[str, Obj]:
    """Create `objects`; returns the stored objects by `Kind/namespace/name`."""
    uids: dict[str, str] = {}
    stored: dict[str, Obj] = {}
    for obj in objects:
        body = _remap(meta.deep_copy(obj), uids)
        rt = kinds.for_kind(body["apiVersion"], body["kind"])
        assert rt is not None, body["kind"]
        status = body.pop("status", None)
        deleting = body["metadata"].pop("deletionTimestamp", None)
        old_uid = body["metadata"].pop("uid", "")
        created = await client.create(rt, body, meta.namespace(body))
        uids[old_uid] = meta.uid(created)
        if status:
            with_status = meta.deep_copy(created)
            with_status["status"] = {**(created.get("status") or {}), **status}
            created = await client.update(rt, with_status, subresource="status")
        if deleting:
            created = await client.delete(rt, meta.name(created), meta.namespace(created))
        stored[f"{rt.kind}/{meta.namespace(created)}/{meta.name(created)}"] = created
    return stored


@pytest.fixture
def seed(cluster: Cluster) -> Seed:
    async def run(*objects: Obj) -> dict[str, Obj]:
        return await seed_objects(cluster.client(), *objects)

    return run


@dataclass
class ClaimControllerHarness:
    """A resource claim controller whose informers have synced; workers are not running, so
    tests call `controller.sync(key)` themselves."""

    controller: ResourceClaimController
    informers: InformerFactory
    metrics: CollectorRegistry

    def counter(self, name: str) -> float:
        return self.metrics.get_sample_value(name) or 0.0


StartController = Callable[..., Awaitable[ClaimControllerHarness]]


@pytest.fixture
async def start_controller(cluster: Cluster) -> AsyncIterator[StartController]:
    factories: list[InformerFactory] = []

    async def start(
        client: Client | None = None, *, rate_limiter: RateLimiter | None = None
    ) -> ClaimControllerHarness:
        client = client or cluster.client(UserInfo(RESOURCE_CLAIM_CONTROLLER))
        factory = InformerFactory(client)
        factories.append(factory)
        metrics = CollectorRegistry()
        controller = ResourceClaimController(
            client, informers=factory, metrics=metrics, rate_limiter=rate_limiter
        )
        await factory.start()
        await asyncio.wait_for(factory.wait_synced(), 5)
        return ClaimControllerHarness(controller, factory, metrics)

    yield start
    for factory in factories:
        await factory.stop()
