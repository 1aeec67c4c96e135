"""Fixtures for the controller tests: a real in-process cluster, a way to seed it, and the
resource claim controller's table machinery (`Case`, `run_case`) with its named objects.

`seed(*objects)` creates builder objects through the API in order. The API server assigns new
UIDs, so references to earlier objects' builder UIDs (ownerReferences, status.reservedFor) are
rewritten; `status` is written through the status subresource; a builder deletionTimestamp
becomes a DELETE (give the object a finalizer or a node so that it stays).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from draplane.api import kinds, meta, versions
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.kinds import EVENTS, POD_SCHEDULING_CONTEXTS, PODS, RESOURCE_CLAIMS
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.client.ratelimit import RateLimiter
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.dra.claims import ANNOTATION_POD_CLAIM_NAME
from draplane.testing.builders import from_claim, from_pod, make_claim, make_pod, make_template
from draplane.testing.cluster import Cluster

Seed = Callable[..., Awaitable[dict[str, Obj]]]


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
        # As in the controller-manager: informers read as the manager, the controller writes
        # as its service account.
        client = client or cluster.client(controller_user("resource-claim-controller"))
        factory = InformerFactory(cluster.client(UserInfo(CONTROLLER_MANAGER)))
        factories.append(factory)
        metrics = CollectorRegistry()
        controller = ResourceClaimController(
            ControllerContext.of(client, factory, metrics=metrics, rate_limiter=rate_limiter),
            mode=versions.CLASSIC,
        )
        await factory.start()
        await asyncio.wait_for(factory.wait_synced(), 5)
        return ClaimControllerHarness(controller, factory, metrics)

    yield start
    for factory in factories:
        await factory.stop()


# Named objects shared by the resource claim controller tables, each built from the one before.
ATTEMPTS = "resourceclaim_controller_create_attempts_total"
FAILURES = "resourceclaim_controller_create_failures_total"
GENERATED = "my-pod-acme-*"
KEEP = "example.com/keep"
"""A finalizer that keeps a deleted object around (no component removes it)."""

template = make_template("my-template").obj()
pod = make_pod("my-pod").claim_template("acme", "my-template").obj()
other_pod = make_pod("other-pod").obj()
pod_with_claim = from_pod(pod).claim_status("acme", "my-pod-acme-abcde").obj()
scheduled_pod = from_pod(pod_with_claim).node("worker").obj()
done_pod = from_pod(pod_with_claim).phase("Succeeded").obj()
generated_claim = (
    make_claim("my-pod-acme-abcde").owned_by_pod(pod).annotation(ANNOTATION_POD_CLAIM_NAME, "acme")
).obj()
allocated_claim = from_claim(generated_claim).allocation(node="worker").obj()
user_claim = make_claim("user-claim").obj()
running_user_pod = make_pod("user-pod").claim_ref("c", "user-claim").obj()
done_user_pod = from_pod(running_user_pod).phase("Succeeded").obj()
allocated_user_claim = from_claim(user_claim).allocation().obj()


def view(*, owner: str | None = None, pod_claim: str | None = None, **extra: Any) -> Obj:
    """What the tables compare of a claim."""
    return {
        "owner": owner,
        "podClaim": pod_claim,
        "reservedFor": [],
        "dealloc": False,
        "deleting": False,
    } | extra


OWNED = view(owner="my-pod", pod_claim="acme")


@dataclass(frozen=True)
class Case:
    objects: tuple[Obj, ...]
    key: ObjectKey
    claims: dict[str, Obj]
    statuses: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    error: str = ""
    events: tuple[str, ...] = ()
    attempts: int = 0
    scheduling_contexts: dict[str, str] = field(default_factory=dict)


def pod_key(name: str = "my-pod") -> ObjectKey:
    return ObjectKey("Pod", "default", name)


def claim_key(name: str) -> ObjectKey:
    return ObjectKey("ResourceClaim", "default", name)


def _display_name(claim: Obj) -> str:
    """Generated names end in 5 random characters: show them as `*`."""
    generate_name = meta.metadata(claim).get("generateName")
    name = meta.name(claim)
    if generate_name and name.startswith(generate_name) and len(name) == len(generate_name) + 5:
        return generate_name + "*"
    return name


async def claim_views(client: Client) -> tuple[dict[str, Obj], dict[str, str]]:
    """Claims as {display name: view}, and actual name -> display name."""
    items = (await client.list(RESOURCE_CLAIMS, "default"))["items"]
    views: dict[str, Obj] = {}
    names: dict[str, str] = {}
    for claim in items:
        ref = meta.controller_ref(claim)
        status = claim.get("status") or {}
        views[_display_name(claim)] = view(
            owner=ref["name"] if ref else None,
            pod_claim=meta.annotations(claim).get(ANNOTATION_POD_CLAIM_NAME),
            reservedFor=[entry["name"] for entry in status.get("reservedFor") or []],
            dealloc=bool(status.get("deallocationRequested")),
            deleting=bool(meta.deletion_timestamp(claim)),
        )
        names[meta.name(claim)] = _display_name(claim)
    return views, names


async def pod_statuses(
    client: Client, names: dict[str, str]
) -> dict[str, list[tuple[str, str | None]]]:
    out: dict[str, list[tuple[str, str | None]]] = {}
    for item in (await client.list(PODS, "default"))["items"]:
        entries = (item.get("status") or {}).get("resourceClaimStatuses") or []
        out[meta.name(item)] = sorted(
            (e["name"], names.get(e.get("resourceClaimName"), e.get("resourceClaimName")))
            for e in entries
        )
    return out


async def warning_events(client: Client) -> list[str]:
    """`Kind/name Reason: message` of every Warning event."""
    items = (await client.list(EVENTS, "default"))["items"]
    return sorted(
        f"{e['involvedObject']['kind']}/{e['involvedObject']['name']} {e['reason']}: {e['message']}"
        for e in items
        if e.get("type") == "Warning"
    )


async def run_case(
    case: Case, *, cluster: Cluster, seed: Seed, start_controller: StartController
) -> ClaimControllerHarness:
    """Seed the case's objects, sync its key once, and compare the API state with it."""
    await seed(*case.objects)
    harness = await start_controller()
    if case.error:
        with pytest.raises(Exception, match=re.escape(case.error)):
            await harness.controller.sync(case.key)
    else:
        await harness.controller.sync(case.key)
    await harness.controller.recorder.flush()

    admin = cluster.client()
    claims, names = await claim_views(admin)
    assert claims == case.claims
    assert await pod_statuses(admin, names) == case.statuses
    assert await warning_events(admin) == sorted(case.events)
    assert harness.counter(ATTEMPTS) == case.attempts
    assert harness.counter(FAILURES) == 0
    contexts = (await admin.list(POD_SCHEDULING_CONTEXTS, "default"))["items"]
    assert {meta.name(c): c["spec"].get("selectedNode") for c in contexts} == (
        case.scheduling_contexts
    )
    return harness
