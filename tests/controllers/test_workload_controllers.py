"""The StatefulSet and DaemonSet controllers against the in-process API server, each writing as
its own service account: a sync's pods, ControllerRevisions, status and events; adoption and
release; history (rollback, collision, trimming); expectations; failure paths."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import kinds, meta
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.errors import StatusError
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.controllers import daemonset_nodes as dn
from draplane.controllers.context import ControllerContext
from draplane.controllers.daemonset import DaemonSetController
from draplane.controllers.history import (
    fnv32,
    hash_data,
    new_revision,
    revision_name,
    template_data,
)
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.statefulset import StatefulSetController
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.cluster import Cluster
from draplane.testing.workloadbuilders import make_daemon_set

from .workload_objects import statefulset, template

Controller = StatefulSetController | DaemonSetController


@dataclass
class Harness:
    controller: Any
    informers: InformerFactory
    admin: Client

    async def settle(self) -> None:
        """Wait until the controller's informers hold what the API server holds."""
        for informer in self.controller.informers():

            async def caught_up(
                rt: kinds.ResourceType = informer.rt, lister: Any = informer.lister
            ) -> bool:
                items = (await self.admin.list(rt))["items"]
                want = {meta.key(o): meta.resource_version(o) for o in items}
                have = {meta.key(o): meta.resource_version(o) for o in lister.list()}
                return want == have

            await wait_for(caught_up, what=f"{informer.rt} informer caught up")

    async def sync(self, kind: str, name: str) -> None:
        await self.settle()
        await self.controller.sync(ObjectKey(kind, "default", name))
        await self.controller.recorder.flush()
        await self.settle()


Start = Callable[[type[Any], str], Awaitable[Harness]]


@pytest.fixture
async def start(cluster: Cluster) -> AsyncIterator[Start]:
    factories: list[InformerFactory] = []

    async def run(cls: type[Any], account: str) -> Harness:
        factory = InformerFactory(cluster.client(UserInfo(CONTROLLER_MANAGER)))
        factories.append(factory)
        controller = cls(ControllerContext.of(cluster.client(controller_user(account)), factory))
        await factory.start()
        await asyncio.wait_for(factory.wait_synced(), 5)
        return Harness(controller, factory, cluster.client())

    yield run
    for factory in factories:
        await factory.stop()


def body(obj: Obj) -> Obj:
    out = meta.deep_copy(obj)
    out["metadata"].pop("uid", None)
    out["metadata"].pop("generation", None)
    out.pop("status", None)
    return out


async def names(client: Client, rt: kinds.ResourceType) -> list[str]:
    return sorted(meta.name(o) for o in (await client.list(rt, "default"))["items"])


async def reasons(client: Client) -> list[str]:
    items = (await client.list(kinds.EVENTS, "default"))["items"]
    return sorted(f"{e['type']} {e['reason']}: {e['message']}" for e in items)


# -- StatefulSet ------------------------------------------------------------------------------


async def test_statefulset_sync_creates_first_pod_revision_and_status(start: Start) -> None:
    h = await start(StatefulSetController, "statefulset-controller")
    stored = await h.admin.create(kinds.STATEFUL_SETS, body(statefulset()), "default")
    await h.sync("StatefulSet", "x")

    [rev] = (await h.admin.list(kinds.CONTROLLER_REVISIONS, "default"))["items"]
    assert rev["revision"] == 1
    assert rev["data"] == template_data(stored["spec"]["template"])
    assert meta.labels(rev)["app"] == "x"
    assert meta.controller_ref(rev)["kind"] == "StatefulSet"  # type: ignore[index]
    assert await names(h.admin, kinds.PODS) == ["x-0"]
    pod = await h.admin.get(kinds.PODS, "x-0", "default")
    assert meta.labels(pod)["controller-revision-hash"] == meta.name(rev)
    status = (await h.admin.get(kinds.STATEFUL_SETS, "x", "default"))["status"]
    assert status == {
        "observedGeneration": 1,
        "replicas": 0,
        "availableReplicas": 0,
        "currentRevision": meta.name(rev),
        "updateRevision": meta.name(rev),
        "collisionCount": 0,
    }
    assert await reasons(h.admin) == [
        "Normal SuccessfulCreate: create Pod x-0 in StatefulSet x successful"
    ]


async def test_statefulset_adopts_orphans_and_releases_strangers(start: Start) -> None:
    h = await start(StatefulSetController, "statefulset-controller")
    stored = await h.admin.create(
        kinds.STATEFUL_SETS,
        # OnDelete: an adopted pod without the update revision's label stays.
        body(statefulset(replicas=1, policy="Parallel", strategy={"type": "OnDelete"})),
        "default",
    )
    orphan = make_pod("x-0").label("app", "x").obj()
    del orphan["metadata"]["uid"]
    await h.admin.create(kinds.PODS, orphan, "default")
    stranger = (
        make_pod("x-1")
        .label("app", "other")
        .owner("StatefulSet", "x", meta.uid(stored), api_version="apps/v1")
        .obj()
    )
    del stranger["metadata"]["uid"]
    await h.admin.create(kinds.PODS, stranger, "default")
    await h.sync("StatefulSet", "x")

    adopted = await h.admin.get(kinds.PODS, "x-0", "default")
    assert meta.controller_ref(adopted)["uid"] == meta.uid(stored)  # type: ignore[index]
    released = await h.admin.get(kinds.PODS, "x-1", "default")
    assert meta.owner_references(released) == []
    # x-0 keeps its slot, with its identity labels restored in place.
    assert meta.labels(adopted)["apps.kubernetes.io/pod-index"] == "0"


async def test_statefulset_history_rollback_and_trim(start: Start) -> None:
    h = await start(StatefulSetController, "statefulset-controller")
    await h.admin.create(
        kinds.STATEFUL_SETS, body(statefulset(replicas=0, revisionHistoryLimit=0)), "default"
    )
    await h.sync("StatefulSet", "x")
    [first] = await names(h.admin, kinds.CONTROLLER_REVISIONS)

    async def set_image(image: str) -> None:
        current = await h.admin.get(kinds.STATEFUL_SETS, "x", "default")
        current["spec"]["template"]["spec"]["containers"][0]["image"] = image
        await h.admin.update(kinds.STATEFUL_SETS, current)
        await h.sync("StatefulSet", "x")

    await set_image("app:2")
    await h.sync("StatefulSet", "x")  # the old current revision is trimmed on the next sync
    status = (await h.admin.get(kinds.STATEFUL_SETS, "x", "default"))["status"]
    # No pods: the update completes at once, and the limit of 0 trims the old revision.
    assert status["currentRevision"] == status["updateRevision"] != first
    assert await names(h.admin, kinds.CONTROLLER_REVISIONS) == [status["updateRevision"]]
    await set_image("app:1")
    await h.sync("StatefulSet", "x")
    # Recreated under its old name (same data, same hash), as the newest revision.
    [back] = (await h.admin.list(kinds.CONTROLLER_REVISIONS, "default"))["items"]
    assert meta.name(back) == first
    assert back["revision"] == 3


def stored_data(stored: Obj, image: str = "") -> Obj:
    """The revision data of the stored (defaulted) set's template, with another image."""
    tmpl = meta.deep_copy(stored["spec"]["template"])
    if image:
        tmpl["spec"]["containers"][0]["image"] = image
    return template_data(tmpl)


async def test_statefulset_rollback_renumbers_equal_revision(start: Start) -> None:
    h = await start(StatefulSetController, "statefulset-controller")
    stored = await h.admin.create(kinds.STATEFUL_SETS, body(statefulset(replicas=0)), "default")
    older = new_revision(
        stored, stored_data(stored), revision=1, collision_count=0, labels={"app": "x"}
    )
    newer = new_revision(
        stored,
        stored_data(stored, "app:2"),
        revision=2,
        collision_count=0,
        labels={"app": "x"},
    )
    for rev in (older, newer):
        await h.admin.create(kinds.CONTROLLER_REVISIONS, rev, "default")
    await h.sync("StatefulSet", "x")
    got = {
        meta.name(r): r["revision"]
        for r in (await h.admin.list(kinds.CONTROLLER_REVISIONS, "default"))["items"]
    }
    assert got == {meta.name(older): 3, meta.name(newer): 2}


async def test_statefulset_name_collision_bumps_collision_count(start: Start) -> None:
    h = await start(StatefulSetController, "statefulset-controller")
    stored = await h.admin.create(kinds.STATEFUL_SETS, body(statefulset(replicas=0)), "default")
    squatter = new_revision(
        stored, stored_data(stored), revision=1, collision_count=0, labels={"app": "x"}
    )
    squatter["data"] = {"something": "else"}
    del squatter["metadata"]["ownerReferences"]
    squatter["metadata"]["labels"] = {"unrelated": "yes"}
    await h.admin.create(kinds.CONTROLLER_REVISIONS, squatter, "default")
    await h.sync("StatefulSet", "x")
    status = (await h.admin.get(kinds.STATEFUL_SETS, "x", "default"))["status"]
    assert status["collisionCount"] == 1
    assert status["updateRevision"] != meta.name(squatter)
    assert len(await names(h.admin, kinds.CONTROLLER_REVISIONS)) == 2


async def test_statefulset_create_failure_is_an_event_and_a_retry(start: Start) -> None:
    # The garbage collector's role may not create pods: a real 403 on the create.
    h = await start(StatefulSetController, "generic-garbage-collector")
    stored = await h.admin.create(kinds.STATEFUL_SETS, body(statefulset()), "default")
    rev = new_revision(
        stored, stored_data(stored), revision=1, collision_count=0, labels={"app": "x"}
    )
    await h.admin.create(kinds.CONTROLLER_REVISIONS, rev, "default")
    with pytest.raises(StatusError, match="cannot create resource"):
        await h.sync("StatefulSet", "x")
    await h.controller.recorder.flush()
    [event] = await reasons(h.admin)
    assert event.startswith("Warning FailedCreate: create Pod x-0 in StatefulSet x failed error:")
    assert await names(h.admin, kinds.PODS) == []
    status = (await h.admin.get(kinds.STATEFUL_SETS, "x", "default"))["status"]
    assert status["updateRevision"] == meta.name(rev)


# -- DaemonSet --------------------------------------------------------------------------------


def daemonset_body() -> Obj:
    ds = make_daemon_set("d").obj()
    del ds["metadata"]["uid"]
    return ds


async def test_daemonset_one_pod_per_node_and_expectations(start: Start) -> None:
    h = await start(DaemonSetController, "daemon-set-controller")
    for name in ("n1", "n2"):
        node = make_node(name).obj()
        del node["metadata"]["uid"]
        await h.admin.create(kinds.NODES, node)
    await h.admin.create(kinds.DAEMON_SETS, daemonset_body(), "default")
    await h.settle()
    key = ObjectKey("DaemonSet", "default", "d")
    await h.controller.sync(key)
    # A second sync before the informer saw the creates must not create again.
    await h.controller.sync(key)
    await h.controller.recorder.flush()
    await h.settle()
    pods = (await h.admin.list(kinds.PODS, "default"))["items"]
    targets = sorted(
        p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchFields"][0]["values"][0]
        for p in pods
    )
    assert targets == ["n1", "n2"]
    assert all(meta.name(p).startswith("d-") for p in pods)
    assert h.controller.expectations.satisfied(key)
    await h.sync("DaemonSet", "d")
    status = (await h.admin.get(kinds.DAEMON_SETS, "d", "default"))["status"]
    assert {k: status[k] for k in ("desiredNumberScheduled", "currentNumberScheduled")} == {
        "desiredNumberScheduled": 2,
        "currentNumberScheduled": 2,
    }
    assert status["observedGeneration"] == 1
    assert len(await names(h.admin, kinds.CONTROLLER_REVISIONS)) == 1


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", 0x811C9DC5, id="empty"),
        pytest.param(b"a", 0x050C5D7E, id="a"),
        pytest.param(b"foobar", 0x31F0B262, id="foobar"),
    ],
)
def test_fnv32_is_fnv1(data: bytes, expected: int) -> None:
    assert fnv32(data) == expected


def test_revision_names() -> None:
    data = template_data(template())
    hashed = hash_data(data, 0)
    assert set(hashed) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert hash_data(data, 1) != hashed
    assert revision_name("x" * 300, hashed) == "x" * 223 + "-" + hashed


async def test_daemonset_leaves_a_node_tainted_no_execute(start: Start) -> None:
    h = await start(DaemonSetController, "daemon-set-controller")
    for name in ("n1", "n2"):
        node = make_node(name).obj()
        del node["metadata"]["uid"]
        await h.admin.create(kinds.NODES, node)
    await h.admin.create(kinds.DAEMON_SETS, daemonset_body(), "default")
    await h.sync("DaemonSet", "d")
    taint = {"spec": {"taints": [{"key": "example.com/drain", "effect": "NoExecute"}]}}
    await h.admin.patch(kinds.NODES, "n2", taint)
    await h.sync("DaemonSet", "d")

    pods = (await h.admin.list(kinds.PODS, "default"))["items"]
    assert [dn.target_node(p) for p in pods] == ["n1"]
    assert any(
        e.startswith("Normal SuccessfulDelete: Deleted pod: d-") for e in await reasons(h.admin)
    )
    await h.sync("DaemonSet", "d")
    status = (await h.admin.get(kinds.DAEMON_SETS, "d", "default"))["status"]
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"]) == (1, 1)
