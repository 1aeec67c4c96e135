"""The Deployment controller against the real API, ReplicaSet status played by the test:
rolling updates step by step for several maxSurge/maxUnavailable settings, Recreate, the new
ReplicaSet's name, labels and revision, rollback to an old template, paused Deployments,
scaling events, history cleanup and a Deployment whose ReplicaSet cannot be created."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import meta
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.errors import StatusError
from draplane.api.kinds import DEPLOYMENTS, EVENTS, REPLICA_SETS
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.controllers.context import ControllerContext
from draplane.controllers.deployment import DeploymentController
from draplane.controllers.deployment_util import REVISION, ROLLBACK_TO, compute_hash
from draplane.controllers.objectkey import ObjectKey
from draplane.testing.apistate import wait_for
from draplane.testing.cluster import Cluster

from .conftest import Seed

KEY = ObjectKey("Deployment", "default", "web")
D_UID = "deployment-uid-1"


def template(image: str) -> Obj:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": image}], "restartPolicy": "Always"},
    }


def deployment(
    replicas: int = 3,
    *,
    image: str = "nginx:2",
    surge: int | str = "25%",
    unavailable: int | str = "25%",
    strategy: str = "RollingUpdate",
    **spec: Any,
) -> Obj:
    strategy_obj: Obj = {"type": strategy}
    if strategy == "RollingUpdate":
        strategy_obj["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": D_UID},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(image),
            "strategy": strategy_obj,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            **spec,
        },
    }


def old_replica_set(
    name: str = "web-old", *, replicas: int = 3, image: str = "nginx:1", revision: int = 1
) -> Obj:
    tmpl = template(image)
    tmpl["metadata"]["labels"]["pod-template-hash"] = name
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": tmpl["metadata"]["labels"],
            "annotations": {REVISION: str(revision)},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "web",
                    "uid": D_UID,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": name}},
            "template": tmpl,
        },
        "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}
        if replicas
        else {"replicas": 0},
    }


@dataclass
class Harness:
    controller: DeploymentController
    client: Client

    async def replica_sets(self) -> list[Obj]:
        return (await self.client.list(REPLICA_SETS, "default"))["items"]

    async def caught_up(self) -> None:
        """Until the controller's informers hold the API's ReplicaSets and Deployment."""
        want = {meta.name(rs): meta.resource_version(rs) for rs in await self.replica_sets()}
        d = await self.client.get(DEPLOYMENTS, "web", "default")

        def seen() -> bool:
            cached_d = self.controller._deployments.lister.get("web", "default")
            got = {
                meta.name(rs): meta.resource_version(rs)
                for rs in self.controller._rs.lister.list("default")
            }
            return (
                got == want
                and cached_d is not None
                and (meta.resource_version(cached_d) == meta.resource_version(d))
            )

        await wait_for(seen, what="informers")

    async def step(self) -> None:
        await self.caught_up()
        await self.controller.sync(KEY)
        await self.caught_up()

    async def settle_replica_sets(self) -> None:
        """Play the ReplicaSet controller: every ReplicaSet's pods exist and are available."""
        for rs in await self.replica_sets():
            size = rs["spec"]["replicas"]
            rs["status"] = {
                "replicas": size,
                "readyReplicas": size,
                "availableReplicas": size,
                "fullyLabeledReplicas": size,
                "observedGeneration": rs["metadata"].get("generation", 1),
            }
            await self.client.update(REPLICA_SETS, rs, subresource="status")

    async def sizes(self) -> tuple[int | None, list[int]]:
        """(new ReplicaSet's replicas or None, old ones' by name)."""
        d = await self.client.get(DEPLOYMENTS, "web", "default")
        new, old = None, []
        for rs in sorted(await self.replica_sets(), key=meta.name):
            if rs["spec"]["template"]["spec"] == d["spec"]["template"]["spec"]:
                new = rs["spec"]["replicas"]
            else:
                old.append(rs["spec"]["replicas"])
        return new, old


@pytest.fixture
async def start(cluster: Cluster) -> AsyncIterator[Callable[[], Awaitable[Harness]]]:
    factories: list[InformerFactory] = []

    async def run() -> Harness:
        factory = InformerFactory(cluster.client(UserInfo(CONTROLLER_MANAGER)))
        factories.append(factory)
        controller = DeploymentController(
            ControllerContext.of(cluster.client(controller_user("deployment-controller")), factory)
        )
        await factory.start()
        await asyncio.wait_for(factory.wait_synced(), 5)
        return Harness(controller, cluster.client())

    yield run
    for factory in factories:
        await factory.stop()


async def run_until_done(harness: Harness, limit: int = 12) -> list[tuple[int | None, list[int]]]:
    """Sync, let the ReplicaSets settle, repeat while sizes change; the sizes after each sync."""
    seen = []
    for _ in range(limit):
        await harness.step()
        sizes = await harness.sizes()
        if seen and sizes == seen[-1]:
            return seen
        seen.append(sizes)
        await harness.settle_replica_sets()
    raise AssertionError(f"no steady state after {limit} syncs: {seen}")


ROLLING = {
    "surge 1, unavailable 0": (
        deployment(3, surge=1, unavailable=0),
        [(1, [3]), (1, [2]), (2, [2]), (2, [1]), (3, [1]), (3, [0])],
    ),
    "surge 0, unavailable 1": (
        deployment(3, surge=0, unavailable=1),
        [(0, [2]), (1, [2]), (1, [1]), (2, [1]), (2, [0]), (3, [0])],
    ),
    "25% of 4 each": (
        deployment(4),
        [(1, [3]), (2, [3]), (2, [1]), (4, [1]), (4, [0])],
    ),
    "recreate": (
        deployment(3, strategy="Recreate"),
        [(None, [0]), (3, [0])],
    ),
}


@pytest.mark.parametrize(("d", "steps"), ROLLING.values(), ids=ROLLING.keys())
async def test_rollout_steps(d: Obj, steps: list[Any], seed: Seed, start: Any) -> None:
    old = old_replica_set(replicas=d["spec"]["replicas"])
    await seed(d, old)
    harness = await start()
    assert await run_until_done(harness) == steps
    status = (await harness.client.get(DEPLOYMENTS, "web", "default"))["status"]
    await harness.step()
    status = (await harness.client.get(DEPLOYMENTS, "web", "default"))["status"]
    conditions = {c["type"]: c["reason"] for c in status["conditions"]}
    assert conditions == {
        "Available": "MinimumReplicasAvailable",
        "Progressing": "NewReplicaSetAvailable",
    }
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "observedGeneration": 1,
        "replicas": d["spec"]["replicas"],
        "updatedReplicas": d["spec"]["replicas"],
        "readyReplicas": d["spec"]["replicas"],
        "availableReplicas": d["spec"]["replicas"],
    }


async def test_new_replica_set_name_labels_and_revision(seed: Seed, start: Any) -> None:
    stored = await seed(deployment(2))
    harness = await start()
    await harness.step()
    (rs,) = await harness.replica_sets()
    d = stored["Deployment/default/web"]
    pod_hash = compute_hash(d["spec"]["template"], None)
    assert meta.name(rs) == f"web-{pod_hash}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert meta.labels(rs) == {"app": "web", "pod-template-hash": pod_hash}
    assert meta.annotations(rs)[REVISION] == "1"
    assert rs["spec"]["replicas"] == 2
    d = await harness.client.get(DEPLOYMENTS, "web", "default")
    assert meta.annotations(d)[REVISION] == "1"
    (cond,) = [c for c in d["status"]["conditions"] if c["type"] == "Progressing"]
    assert (cond["reason"], cond["message"]) == (
        "NewReplicaSetCreated",
        f'Created new replica set "web-{pod_hash}"',
    )
    events = (await harness.client.list(EVENTS, "default"))["items"]
    await harness.controller.recorder.flush()
    events = (await harness.client.list(EVENTS, "default"))["items"]
    assert [e["message"] for e in events] == [f"Scaled up replica set web-{pod_hash} from 0 to 2"]


async def test_going_back_to_an_old_template_reuses_its_replica_set(seed: Seed, start: Any) -> None:
    await seed(
        deployment(2, image="nginx:1"),
        old_replica_set("web-v1", replicas=0, image="nginx:1", revision=1),
        old_replica_set("web-v2", replicas=2, image="nginx:2", revision=2),
    )
    harness = await start()
    await run_until_done(harness)
    by_name = {meta.name(rs): rs for rs in await harness.replica_sets()}
    assert by_name["web-v1"]["spec"]["replicas"] == 2
    assert by_name["web-v2"]["spec"]["replicas"] == 0
    annotations = meta.annotations(by_name["web-v1"])
    assert (annotations[REVISION], annotations["deployment.kubernetes.io/revision-history"]) == (
        "3",
        "1",
    )


async def test_rollback_annotation_copies_the_revision_template(seed: Seed, start: Any) -> None:
    d = deployment(2, image="nginx:2")
    d["metadata"]["annotations"] = {ROLLBACK_TO: "1"}
    await seed(
        d,
        old_replica_set("web-v1", replicas=0, image="nginx:1", revision=1),
        old_replica_set("web-v2", replicas=2, image="nginx:2", revision=2),
    )
    harness = await start()
    await harness.step()
    stored = await harness.client.get(DEPLOYMENTS, "web", "default")
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1"
    assert ROLLBACK_TO not in meta.annotations(stored)
    assert "pod-template-hash" not in stored["spec"]["template"]["metadata"]["labels"]
    await harness.controller.recorder.flush()
    events = (await harness.client.list(EVENTS, "default"))["items"]
    assert [e["reason"] for e in events] == ["DeploymentRollback"]


async def test_paused_deployment_creates_no_replica_set_but_scales(seed: Seed, start: Any) -> None:
    await seed(deployment(5, paused=True), old_replica_set(replicas=3))
    harness = await start()
    await harness.step()
    assert await harness.sizes() == (None, [5])
    d = await harness.client.get(DEPLOYMENTS, "web", "default")
    (cond,) = [c for c in d["status"]["conditions"] if c["type"] == "Progressing"]
    assert (cond["status"], cond["reason"]) == ("Unknown", "DeploymentPaused")


async def test_old_replica_sets_beyond_the_history_limit_are_deleted(
    seed: Seed, start: Any
) -> None:
    await seed(
        deployment(1, image="nginx:9", revisionHistoryLimit=1),
        *(
            old_replica_set(f"web-v{i}", replicas=0, image=f"nginx:{i}", revision=i)
            for i in (1, 2, 3)
        ),
    )
    harness = await start()
    await run_until_done(harness)
    await harness.step()
    names = sorted(meta.name(rs) for rs in await harness.replica_sets())
    assert [n for n in names if n.startswith("web-v")] == ["web-v3"]
    assert len(names) == 2


async def test_a_hash_collision_raises_the_collision_count(seed: Seed, start: Any) -> None:
    stored = await seed(deployment(1))
    d = stored["Deployment/default/web"]
    taken = f"web-{compute_hash(d['spec']['template'], None)}"
    squatter = old_replica_set(taken, replicas=0, image="busybox")
    squatter["metadata"].pop("ownerReferences")
    await seed(squatter)
    harness = await start()
    await harness.caught_up()
    with pytest.raises(StatusError, match="already exists"):
        await harness.controller.sync(KEY)
    d = await harness.client.get(DEPLOYMENTS, "web", "default")
    assert d["status"]["collisionCount"] == 1
    await harness.step()
    names = {meta.name(rs) for rs in await harness.replica_sets()}
    assert names == {taken, f"web-{compute_hash(d['spec']['template'], 1)}"}


@pytest.mark.parametrize(
    ("labels", "owned", "controlled"),
    [
        pytest.param({"app": "web"}, False, True, id="a matching orphan is adopted"),
        pytest.param(
            {"app": "other"}, True, False, id="an owned one that stopped matching is released"
        ),
        pytest.param({"app": "other"}, False, False, id="a non-matching orphan is left alone"),
    ],
)
async def test_replica_set_adoption_and_release(
    labels: dict[str, str], owned: bool, controlled: bool, seed: Seed, start: Any
) -> None:
    rs = old_replica_set("web-x", replicas=0)
    rs["metadata"]["labels"] = labels
    if not owned:
        rs["metadata"].pop("ownerReferences")
    await seed(deployment(1), rs)
    harness = await start()
    await harness.step()
    stored = await harness.client.get(REPLICA_SETS, "web-x", "default")
    d = await harness.client.get(DEPLOYMENTS, "web", "default")
    assert ((meta.controller_ref(stored) or {}).get("uid") == meta.uid(d)) is controlled
