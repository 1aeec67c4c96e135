"""The ReplicaSet controller against the real API: one `sync` per table row (scale up and
down with the deletion ranking, adoption and release, pods of other owners), expectations
that keep a second sync from acting on a stale cache, and create failures that set
ReplicaFailure, record FailedCreate and retry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from draplane.api import meta
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.errors import StatusError, internal
from draplane.api.kinds import EVENTS, PODS, REPLICA_SETS
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client, Transport
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.replicaset import ReplicaSetController
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod
from draplane.testing.cluster import Cluster
from draplane.testing.workloadbuilders import make_replica_set

from .conftest import Seed

RS_UID = "rs-uid-0001"
KEY = ObjectKey("ReplicaSet", "default", "web")


def replica_set(replicas: int, **spec: Any) -> Obj:
    builder = make_replica_set("web").uid(RS_UID).replicas(replicas)
    for key, value in spec.items():
        builder = builder.set(f"spec.{key}", value)
    return builder.obj()


def web_pod(name: str, *, owned: bool = True, app: str = "web") -> Any:
    builder = make_pod(name).label("app", app)
    if owned:
        builder = builder.owner("ReplicaSet", "web", RS_UID, api_version="apps/v1")
    return builder


def running(name: str, **kw: Any) -> Obj:
    return web_pod(name, **kw).node("n1").phase("Running").condition("Ready", "True").obj()


class FailingCreates:
    """Pod creates fail with a 500 while `failing`."""

    def __init__(self, inner: Transport) -> None:
        self._inner = inner
        self.failing = True

    @property
    def user(self) -> str:
        return self._inner.user

    async def send(self, request: Request) -> Any:
        if self.failing and request.verb == "create" and request.rt is PODS:
            raise internal("injected pod create failure")
        return await self._inner.send(request)

    async def close(self) -> None:
        await self._inner.close()


@dataclass
class Harness:
    controller: ReplicaSetController
    factory: InformerFactory
    transport: FailingCreates

    async def caught_up(self, client: Client) -> None:
        """Until the controller's pod informer holds what the API holds."""
        want = {meta.name(p) for p in (await client.list(PODS, "default"))["items"]}

        def seen() -> bool:
            return {meta.name(p) for p in self.controller._pods.lister.list("default")} == want

        await wait_for(seen, what="pod informer")


@pytest.fixture
async def start(cluster: Cluster) -> AsyncIterator[Callable[..., Awaitable[Harness]]]:
    factories: list[InformerFactory] = []

    async def run(*, failing: bool = False) -> Harness:
        inner = cluster.client(controller_user("replicaset-controller")).transport
        transport = FailingCreates(inner)
        transport.failing = failing
        factory = InformerFactory(cluster.client(UserInfo(CONTROLLER_MANAGER)))
        factories.append(factory)
        controller = ReplicaSetController(ControllerContext.of(Client(transport), factory))
        await factory.start()
        await asyncio.wait_for(factory.wait_synced(), 5)
        return Harness(controller, factory, transport)

    yield run
    for factory in factories:
        await factory.stop()


async def pod_names(client: Client) -> list[str]:
    pods = (await client.list(PODS, "default"))["items"]
    return sorted(meta.name(p) for p in pods if not meta.deletion_timestamp(p))


async def reasons(client: Client) -> list[str]:
    items = (await client.list(EVENTS, "default"))["items"]
    return sorted(f"{e['reason']}" for e in items)


@dataclass(frozen=True)
class Case:
    objects: tuple[Obj, ...]
    pods: list[str]
    """Pod names left (generated ones as `web-*`), sorted."""
    owned: list[str] = field(default_factory=list)
    """Pods the ReplicaSet controls afterwards (generated ones as `web-*`)."""
    events: list[str] = field(default_factory=list)
    status: Obj = field(default_factory=dict)


def _display(name: str) -> str:
    return "web-*" if name.startswith("web-") and len(name) == len("web-") + 5 else name


CASES = {
    "scale up from zero": Case(
        objects=(replica_set(3),),
        pods=["web-*", "web-*", "web-*"],
        owned=["web-*", "web-*", "web-*"],
        events=["SuccessfulCreate"] * 3,
        status={"replicas": 0, "observedGeneration": 1},
    ),
    "scale down deletes unscheduled, then pending, then not ready": Case(
        objects=(
            replica_set(1),
            running("ready"),
            web_pod("unready").node("n1").phase("Running").condition("Ready", "False").obj(),
            web_pod("pending").node("n1").phase("Pending").obj(),
            web_pod("unscheduled").obj(),
        ),
        pods=["ready"],
        owned=["ready"],
        events=["SuccessfulDelete"] * 3,
        status={
            "replicas": 4,
            "fullyLabeledReplicas": 4,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "observedGeneration": 1,
        },
    ),
    "orphans that match are adopted": Case(
        objects=(replica_set(1), running("orphan", owned=False)),
        pods=["orphan"],
        owned=["orphan"],
        status={
            "replicas": 1,
            "fullyLabeledReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "observedGeneration": 1,
        },
    ),
    "a pod that no longer matches is released and replaced": Case(
        objects=(replica_set(1), running("relabeled", app="other")),
        pods=["relabeled", "web-*"],
        owned=["web-*"],
        events=["SuccessfulCreate"],
        status={"replicas": 0, "observedGeneration": 1},
    ),
    "pods of another owner are left alone": Case(
        objects=(
            replica_set(0),
            make_pod("foreign").label("app", "web").owner("ReplicaSet", "other", "x").obj(),
        ),
        pods=["foreign"],
        status={"replicas": 0, "observedGeneration": 1},
    ),
    "succeeded pods do not count": Case(
        objects=(replica_set(1), web_pod("done").node("n1").phase("Succeeded").obj()),
        pods=["done", "web-*"],
        owned=["done", "web-*"],
        events=["SuccessfulCreate"],
        status={"replicas": 0, "observedGeneration": 1},
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_sync(case: Case, cluster: Cluster, seed: Seed, start: Any) -> None:
    await seed(*case.objects)
    harness = await start()
    await harness.controller.sync(KEY)
    await harness.controller.recorder.flush()
    admin = cluster.client()
    assert sorted(_display(n) for n in await pod_names(admin)) == case.pods
    rs = await admin.get(REPLICA_SETS, "web", "default")
    owned = [
        _display(meta.name(p))
        for p in (await admin.list(PODS, "default"))["items"]
        if not meta.deletion_timestamp(p)
        and (meta.controller_ref(p) or {}).get("uid") == meta.uid(rs)
    ]
    assert sorted(owned) == case.owned
    assert await reasons(admin) == sorted(case.events)
    assert rs.get("status") == case.status


async def test_generated_pods_copy_the_template_and_block_owner_deletion(
    cluster: Cluster, seed: Seed, start: Any
) -> None:
    await seed(replica_set(1))
    harness = await start()
    await harness.controller.sync(KEY)
    (created,) = (await cluster.client().list(PODS, "default"))["items"]
    assert created["metadata"]["generateName"] == "web-"
    assert created["metadata"]["labels"] == {"app": "web"}
    assert meta.owner_references(created) == [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": meta.uid(await cluster.client().get(REPLICA_SETS, "web", "default")),
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


async def test_expectations_keep_a_stale_cache_from_creating_twice(
    cluster: Cluster, seed: Seed, start: Any
) -> None:
    await seed(replica_set(3))
    harness = await start()
    await harness.controller.sync(KEY)
    await harness.controller.sync(KEY)  # the informer may not have the pods yet
    assert len(await pod_names(cluster.client())) == 3
    await harness.caught_up(cluster.client())
    assert harness.controller.expectations.satisfied("default/web")
    await harness.controller.sync(KEY)
    assert len(await pod_names(cluster.client())) == 3


async def test_create_failures_set_replica_failure_then_clear(
    cluster: Cluster, seed: Seed, start: Any
) -> None:
    await seed(replica_set(4))
    harness = await start(failing=True)
    with pytest.raises(StatusError, match="injected pod create failure"):
        await harness.controller.sync(KEY)
    await harness.controller.recorder.flush()
    admin = cluster.client()
    rs = await admin.get(REPLICA_SETS, "web", "default")
    (cond,) = rs["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == (
        "ReplicaFailure",
        "True",
        "FailedCreate",
    )
    assert "injected pod create failure" in cond["message"]
    # The slow start stopped after the first batch of one.
    assert await reasons(admin) == ["FailedCreate"]
    assert harness.controller.expectations.satisfied("default/web")

    harness.transport.failing = False
    await harness.controller.sync(KEY)
    assert len(await pod_names(admin)) == 4
    rs = await admin.get(REPLICA_SETS, "web", "default")
    assert "conditions" not in rs["status"]


async def test_a_replica_set_being_deleted_creates_nothing(
    cluster: Cluster, seed: Seed, start: Any
) -> None:
    deleting = replica_set(2)
    deleting["metadata"]["finalizers"] = ["example.com/keep"]
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    await seed(deleting)
    harness = await start()
    await harness.controller.sync(KEY)
    assert await pod_names(cluster.client()) == []
