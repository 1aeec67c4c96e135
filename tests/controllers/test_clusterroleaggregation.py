"""ClusterRole aggregation controller through the in-process API: `sync` writes the union of the
selected roles' rules, writes nothing when they already match, and the running controller (alone
and inside ControllerManager) follows label, rule and deletion changes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.controllers.clusterroleaggregation import ClusterRoleAggregationController
from draplane.controllers.manager import ControllerManager
from draplane.controllers.objectkey import ObjectKey
from draplane.testing.apistate import wait_for
from draplane.testing.cluster import Cluster
from draplane.testing.rbacbuilders import make_cluster_role, rule

CR = kinds.CLUSTER_ROLES
GET_PODS = rule(["get"], [""], ["pods"])
LIST_NODES = rule(["list"], [""], ["nodes"])
HEALTH = {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}
AGG = {"rbac.example.com/aggregate-to-mine": "true"}


def key(name: str = "mine") -> ObjectKey:
    return ObjectKey("ClusterRole", "", name)


async def create(client: Client, *roles: Obj) -> None:
    for role in roles:
        await client.create(CR, role)


async def rules_of(client: Client, name: str = "mine") -> list[Obj]:
    return list((await client.get(CR, name)).get("rules") or [])


@dataclass(frozen=True)
class Case:
    roles: tuple[Obj, ...]
    rules: list[Obj]
    written: bool = True


CASES = [
    pytest.param(
        Case(
            (
                make_cluster_role("mine").aggregate(AGG).obj(),
                make_cluster_role("b-source")
                .label("rbac.example.com/aggregate-to-mine", "true")
                .rules([LIST_NODES, GET_PODS])
                .obj(),
                make_cluster_role("a-source")
                .label("rbac.example.com/aggregate-to-mine", "true")
                .rules([GET_PODS, HEALTH])
                .obj(),
                make_cluster_role("unrelated").rules([rule(["*"], ["*"], ["*"])]).obj(),
            ),
            [GET_PODS, HEALTH, LIST_NODES],
        ),
        id="union-in-name-order-duplicates-dropped",
    ),
    pytest.param(
        Case(
            (
                make_cluster_role("mine").aggregate(AGG).rules([LIST_NODES]).obj(),
                make_cluster_role("source")
                .label("rbac.example.com/aggregate-to-mine", "true")
                .rules([GET_PODS])
                .obj(),
            ),
            [GET_PODS],
        ),
        id="hand-written-rules-replaced",
    ),
    pytest.param(
        Case(
            (
                make_cluster_role("mine").aggregate(AGG).rules([GET_PODS]).obj(),
                make_cluster_role("source")
                .label("rbac.example.com/aggregate-to-mine", "true")
                .rules([GET_PODS])
                .obj(),
            ),
            [GET_PODS],
            written=False,
        ),
        id="already-aggregated-not-written",
    ),
    pytest.param(
        Case((make_cluster_role("mine").rules([GET_PODS]).obj(),), [GET_PODS], written=False),
        id="not-aggregated-left-alone",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_sync(cluster: Cluster, case: Case) -> None:
    admin = cluster.client()
    await create(admin, *case.roles)
    before = meta.resource_version(await admin.get(CR, "mine"))
    factory = InformerFactory(admin)
    controller = ClusterRoleAggregationController(admin, informers=factory)
    await factory.start()
    try:
        await asyncio.wait_for(factory.wait_synced(), 5)
        await controller.sync(key())
        await controller.sync(key("gone"))
    finally:
        await factory.stop()
    stored = await admin.get(CR, "mine")
    assert stored.get("rules") == case.rules
    assert (meta.resource_version(stored) != before) is case.written


async def test_stale_cache_conflicts(cluster: Cluster) -> None:
    admin = cluster.client()
    await create(
        admin,
        make_cluster_role("mine").aggregate(AGG).obj(),
        make_cluster_role("source")
        .label("rbac.example.com/aggregate-to-mine", "true")
        .rules([GET_PODS])
        .obj(),
    )
    factory = InformerFactory(admin)
    controller = ClusterRoleAggregationController(admin, informers=factory)
    await factory.start()
    try:
        await asyncio.wait_for(factory.wait_synced(), 5)
        await factory.stop()  # the cache stops here
        changed = meta.deep_copy(await admin.get(CR, "mine"))
        changed["metadata"]["labels"] = {"touched": "yes"}
        await admin.update(CR, changed)
        with pytest.raises(errors.StatusError) as raised:
            await controller.sync(key())
        assert errors.is_conflict(raised.value)
    finally:
        await factory.stop()
    assert await rules_of(admin) == []


async def _follows_changes(admin: Client) -> None:
    await create(
        admin,
        make_cluster_role("mine").aggregate(AGG).obj(),
        make_cluster_role("source")
        .label("rbac.example.com/aggregate-to-mine", "true")
        .rules([GET_PODS])
        .obj(),
    )

    async def rules_are(expected: list[Obj]) -> bool:
        return await rules_of(admin) == expected

    await wait_for(lambda: rules_are([GET_PODS]), what="aggregated rules")
    await admin.create(
        CR,
        make_cluster_role("later")
        .label("rbac.example.com/aggregate-to-mine", "true")
        .rules([LIST_NODES])
        .obj(),
    )
    await wait_for(lambda: rules_are([LIST_NODES, GET_PODS]), what="a new source role")
    source = meta.deep_copy(await admin.get(CR, "source"))
    source["rules"] = [HEALTH]
    await admin.update(CR, source)
    await wait_for(lambda: rules_are([LIST_NODES, HEALTH]), what="a changed source role")
    await admin.delete(CR, "later")
    await wait_for(lambda: rules_are([HEALTH]), what="a deleted source role")
    unlabelled = meta.deep_copy(await admin.get(CR, "source"))
    unlabelled["metadata"]["labels"] = {}
    await admin.update(CR, unlabelled)
    await wait_for(lambda: rules_are([]), what="a source role losing its label")


async def test_running_controller_follows_changes(cluster: Cluster) -> None:
    admin = cluster.client()
    factory = InformerFactory(admin)
    controller = ClusterRoleAggregationController(admin, informers=factory)
    await factory.start()
    running = asyncio.create_task(controller.run())
    try:
        await _follows_changes(admin)
        assert controller.has_synced()
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await factory.stop()


async def test_manager_runs_the_controller(cluster: Cluster) -> None:
    admin = cluster.client()
    manager = ControllerManager(admin, mode=versions.CLASSIC)
    running = asyncio.create_task(manager.run())
    try:
        await _follows_changes(admin)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
