"""Garbage collector: dependents of missing owners go, dangling references are dropped,
Foreground and Orphan deletion, and the event-driven cascade from a deleted pod."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest

from draplane.api import meta
from draplane.api.errors import StatusError
from draplane.api.kinds import (
    CONFIGMAPS,
    POD_SCHEDULING_CONTEXTS,
    PODS,
    RESOURCE_CLAIMS,
    ResourceType,
)
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.controllers.context import ControllerContext
from draplane.controllers.garbagecollector import GarbageCollector
from draplane.controllers.objectkey import ObjectKey
from draplane.testing.apistate import wait_for
from draplane.testing.builders import (
    from_claim,
    make_claim,
    make_node,
    make_pod,
    make_scheduling_context,
)

pod = make_pod("my-pod").obj()
node = make_node("node-0").obj()
owned_claim = make_claim("owned").owned_by_pod(pod).obj()


def configmap(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
    }


async def exists(client: Client, rt: ResourceType, name: str, namespace: str = "default") -> bool:
    try:
        await client.get(rt, name, namespace)
    except StatusError:
        return False
    return True


@dataclass
class GC:
    collector: GarbageCollector
    informers: InformerFactory


@pytest.fixture
async def start_gc(cluster) -> AsyncIterator[Callable[[], Awaitable[GC]]]:
    started: list[InformerFactory] = []

    async def start() -> GC:
        factory = InformerFactory(cluster.client())
        started.append(factory)
        collector = GarbageCollector(ControllerContext.of(cluster.client(), factory))
        await factory.start()
        await asyncio.wait_for(factory.wait_synced(), 5)
        return GC(collector, factory)

    yield start
    for factory in started:
        await factory.stop()


@dataclass(frozen=True)
class Case:
    objects: tuple[Obj, ...]
    key: ObjectKey
    claims: dict[str, list[str]]  # claim name -> names of its owners afterwards


CASES = [
    pytest.param(
        Case((owned_claim,), ObjectKey("ResourceClaim", "default", "owned"), {}),
        id="owner-missing",
    ),
    pytest.param(
        Case(
            (pod, owned_claim),
            ObjectKey("ResourceClaim", "default", "owned"),
            {"owned": ["my-pod"]},
        ),
        id="owner-present",
    ),
    pytest.param(
        Case(
            (make_pod("my-pod").obj(), owned_claim),
            ObjectKey("ResourceClaim", "default", "owned"),
            {},
        ),
        id="owner-replaced-by-same-name",
    ),
    pytest.param(
        Case(
            (
                pod,
                from_claim(owned_claim)
                .owner("ConfigMap", "gone", "gone-uid", controller=False)
                .obj(),
            ),
            ObjectKey("ResourceClaim", "default", "owned"),
            {"owned": ["my-pod"]},
        ),
        id="dangling-reference-removed",
    ),
    pytest.param(
        Case(
            (make_claim("c").owner("Widget", "w", "w-uid", api_version="example.com/v1").obj(),),
            ObjectKey("ResourceClaim", "default", "c"),
            {"c": ["w"]},
        ),
        id="unknown-owner-kind-kept",
    ),
    pytest.param(
        Case(
            (node, make_claim("c").owner("Node", "node-0", node["metadata"]["uid"]).obj()),
            ObjectKey("ResourceClaim", "default", "c"),
            {"c": ["node-0"]},
        ),
        id="cluster-scoped-owner-present",
    ),
    pytest.param(
        Case(
            (make_claim("c").owner("Node", "node-0", "gone-uid").obj(),),
            ObjectKey("ResourceClaim", "default", "c"),
            {},
        ),
        id="cluster-scoped-owner-missing",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_attempt_to_delete(case: Case, cluster, seed, start_gc) -> None:
    await seed(*case.objects)
    gc = await start_gc()
    await gc.collector.sync(case.key)
    claims = (await cluster.client().list(RESOURCE_CLAIMS, "default"))["items"]
    assert {
        meta.name(c): [ref["name"] for ref in meta.owner_references(c)] for c in claims
    } == case.claims


async def test_foreground_deletes_dependents_then_owner(cluster, seed, start_gc) -> None:
    admin = cluster.client()
    await seed(pod, owned_claim, from_claim(owned_claim).name("kept").finalizer("test/keep").obj())
    await admin.delete(PODS, "my-pod", "default", propagation_policy="Foreground")
    gc = await start_gc()
    key = ObjectKey("Pod", "default", "my-pod")
    await gc.collector.sync(key)
    assert not await exists(admin, RESOURCE_CLAIMS, "owned")
    kept = await admin.get(RESOURCE_CLAIMS, "kept", "default")
    assert meta.deletion_timestamp(kept)
    # The blocking dependent is still there: the owner waits.
    assert meta.finalizers(await admin.get(PODS, "my-pod", "default")) == ["foregroundDeletion"]

    running = asyncio.create_task(gc.collector.run())
    try:
        released = meta.deep_copy(kept)
        released["metadata"]["finalizers"] = []
        await admin.update(RESOURCE_CLAIMS, released)
        await wait_for(lambda: _gone(admin, PODS, "my-pod"))
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def _gone(client: Client, rt: ResourceType, name: str) -> bool:
    return not await exists(client, rt, name)


async def test_orphan_strips_owner_references(cluster, seed, start_gc) -> None:
    admin = cluster.client()
    await seed(
        pod,
        owned_claim,
        from_claim(owned_claim).name("also").owner("Node", "n", "n-uid", controller=False).obj(),
    )
    await admin.delete(PODS, "my-pod", "default", propagation_policy="Orphan")
    gc = await start_gc()
    await gc.collector.sync(ObjectKey("Pod", "default", "my-pod"))
    assert not await exists(admin, PODS, "my-pod")
    owned = await admin.get(RESOURCE_CLAIMS, "owned", "default")
    also = await admin.get(RESOURCE_CLAIMS, "also", "default")
    assert meta.owner_references(owned) == []
    assert [ref["name"] for ref in meta.owner_references(also)] == ["n"]


async def test_deleted_pod_takes_its_claims_and_scheduling_context(cluster, seed, start_gc) -> None:
    admin = cluster.client()
    stored = await seed(
        pod,
        owned_claim,
        make_scheduling_context(pod).obj(),
        configmap("unrelated"),
    )
    gc = await start_gc()
    running = asyncio.create_task(gc.collector.run())
    try:
        await admin.delete(PODS, "my-pod", "default")
        await wait_for(lambda: _gone(admin, RESOURCE_CLAIMS, "owned"))
        await wait_for(lambda: _gone(admin, POD_SCHEDULING_CONTEXTS, "my-pod"))
        assert await exists(admin, CONFIGMAPS, "unrelated")
        # A dependent created after its owner is gone goes too.
        late = make_claim("late").owned_by_pod(stored["Pod/default/my-pod"]).obj()
        del late["metadata"]["uid"]
        await admin.create(RESOURCE_CLAIMS, late, "default")
        await wait_for(lambda: _gone(admin, RESOURCE_CLAIMS, "late"))
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def test_resync_queues_objects_with_owners(seed, start_gc) -> None:
    await seed(pod, owned_claim, configmap("plain"))
    gc = await start_gc()
    queued = set()
    while len(gc.collector.queue):
        key = await gc.collector.queue.get()
        gc.collector.queue.done(key)
        queued.add(key)
    assert queued == {ObjectKey("ResourceClaim", "default", "owned")}
    gc.collector.resync()
    assert len(gc.collector.queue) == 1
