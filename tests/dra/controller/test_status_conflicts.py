"""The PodSchedulingContext status write of the driver helper when another writer got in
first: another driver's answer is merged and written at once; a changed spec or a vanished
object ends the sync (repeated silently, or reported). Updates that only add answers do not
make a driver sync again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.dra.controller import DriverController
from draplane.dra.controller._context import SyncContext, SyncError
from draplane.dra.controller._controller import _only_status_added
from draplane.dra.controller._interfaces import ClaimAllocation
from draplane.dra.controller._scheduling import _update_status
from draplane.testing.apistate import seed_objects, wait_for
from draplane.testing.builders import (
    from_scheduling_context,
    make_claim,
    make_class,
    make_pod,
    make_scheduling_context,
)
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster

from .conftest import DRIVER, Env, FakeDriver, driver_user

Interference = Callable[[Client, Obj], Awaitable[Any]]


class InterferingClient:
    """Delegates to a real client; runs `before_status` once, just before the first status
    write, as a concurrent writer would."""

    def __init__(self, client: Client, before_status: Interference) -> None:
        self._client = client
        self._before = before_status
        self.status_writes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def update(self, rt: Any, obj: Obj, **kwargs: Any) -> Obj:
        if kwargs.get("subresource") == "status":
            if self.status_writes == 0:
                await self._before(self._client, obj)
            self.status_writes += 1
        return await self._client.update(rt, obj, **kwargs)


async def _other_driver_answers(client: Client, psc: Obj) -> None:
    changed = meta.deep_copy(await client.get(kinds.POD_SCHEDULING_CONTEXTS, "p", "default"))
    changed["status"] = {"resourceClaims": [{"name": "theirs", "unsuitableNodes": ["node-1"]}]}
    await client.update(kinds.POD_SCHEDULING_CONTEXTS, changed, subresource="status")


async def _scheduler_selects_a_node(client: Client, psc: Obj) -> None:
    changed = meta.deep_copy(await client.get(kinds.POD_SCHEDULING_CONTEXTS, "p", "default"))
    changed["spec"]["selectedNode"] = "node-0"
    await client.update(kinds.POD_SCHEDULING_CONTEXTS, changed)


async def _deleted(client: Client, psc: Obj) -> None:
    await client.delete(kinds.POD_SCHEDULING_CONTEXTS, "p", "default")


@dataclass(frozen=True)
class Case:
    interference: Interference
    written: bool
    status_writes: int
    entries: list[str] | None
    """Pod claim names in the stored status afterwards (None: the object is gone)."""


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Case(_other_driver_answers, True, 2, ["theirs", "mine"]), id="other-driver"),
        pytest.param(Case(_scheduler_selects_a_node, False, 1, []), id="spec-changed"),
    ],
)
async def test_conflicting_status_write(env: Env, case: Case) -> None:
    pod = await env.admin.create(kinds.PODS, make_pod("p").obj(), "default")
    psc = await env.admin.create(
        kinds.POD_SCHEDULING_CONTEXTS,
        make_scheduling_context(pod).potential_nodes("node-0", "node-1").obj(),
        "default",
    )
    client = InterferingClient(env.admin, case.interference)
    item = ClaimAllocation(
        pod_claim_name="mine",
        claim=make_claim("c").obj(),
        resource_class={},
        claim_parameters=None,
        class_parameters=None,
    )
    ctx = SyncContext(
        client=client,  # type: ignore[arg-type]
        driver_name=DRIVER,
        driver=FakeDriver(),
        claims=None,  # type: ignore[arg-type]
        classes=None,  # type: ignore[arg-type]
        set_reserved_for=True,
    )

    written = await _update_status(ctx, psc, [item])

    stored = await env.admin.get(kinds.POD_SCHEDULING_CONTEXTS, "p", "default")
    names = [e["name"] for e in (stored.get("status") or {}).get("resourceClaims") or []]
    assert (written, client.status_writes) == (case.written, case.status_writes)
    assert names == case.entries


async def test_other_status_write_failures_are_errors(env: Env) -> None:
    pod = await env.admin.create(kinds.PODS, make_pod("p").obj(), "default")
    psc = await env.admin.create(
        kinds.POD_SCHEDULING_CONTEXTS,
        make_scheduling_context(pod).potential_nodes("n").obj(),
        "default",
    )
    client = InterferingClient(env.admin, _deleted)
    item = ClaimAllocation(
        pod_claim_name="mine",
        claim={},
        resource_class={},
        claim_parameters=None,
        class_parameters=None,
    )
    ctx = SyncContext(client, DRIVER, FakeDriver(), None, None, True)  # type: ignore[arg-type]

    with pytest.raises(SyncError, match=r"update unsuitable node status: .*not found"):
        await _update_status(ctx, psc, [item])

    assert client.status_writes == 1


PSC_BASE = make_scheduling_context(make_pod("p").obj()).potential_nodes("n").obj()
PSC_ANSWERED = from_scheduling_context(PSC_BASE).unsuitable_nodes("a").obj()
PSC_BOTH = from_scheduling_context(PSC_ANSWERED).unsuitable_nodes("b", "n").obj()


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(PSC_BASE, PSC_ANSWERED, True, id="first-answer"),
        pytest.param(PSC_ANSWERED, PSC_BOTH, True, id="another-answer"),
        pytest.param(PSC_BOTH, PSC_BOTH, True, id="no-change"),
        pytest.param(PSC_BOTH, PSC_ANSWERED, False, id="answer-removed"),
        pytest.param(
            PSC_ANSWERED,
            from_scheduling_context(PSC_ANSWERED).selected_node("n").obj(),
            False,
            id="spec-changed",
        ),
        pytest.param(
            PSC_ANSWERED,
            from_scheduling_context(PSC_ANSWERED).deletion_timestamp().obj(),
            False,
            id="being-deleted",
        ),
    ],
)
def test_only_answers_added_do_not_resync(old: Obj, new: Obj, want: bool) -> None:
    assert _only_status_added(old, new) is want


class LosingClient:
    """The driver's client; its first status write loses to a write still being committed
    (409, and a GET does not show the winner yet)."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self.lost = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def update(self, rt: Any, obj: Obj, **kwargs: Any) -> Obj:
        if kwargs.get("subresource") == "status" and self.lost == 0:
            self.lost += 1
            raise errors.conflict(rt, meta.name(obj))
        return await self._client.update(rt, obj, **kwargs)


async def test_a_lost_status_write_is_repeated_when_the_winning_write_arrives(
    cluster: Cluster, clock: FakeClock
) -> None:
    start = clock.monotonic()
    admin = cluster.client()
    client = LosingClient(cluster.client(driver_user()))
    controller = DriverController(client, DRIVER, FakeDriver(), clock=clock, workers=1)  # type: ignore[arg-type]
    task = asyncio.create_task(controller.run())
    try:
        _, pod, _ = await seed_objects(
            admin,
            make_class().obj(),
            make_pod("p").claim_ref("gpu", "my-claim").obj(),
            make_claim().obj(),
        )
        await seed_objects(admin, make_scheduling_context(pod).potential_nodes("n").obj())

        async def lost() -> bool:
            return client.lost == 1

        await wait_for(lost, what="the lost status write")
        # The winner arrives: another driver's answer, an update that only adds an answer.
        await _other_driver_answers(admin, {})

        async def both_answers() -> list[str] | None:
            psc = await admin.get(kinds.POD_SCHEDULING_CONTEXTS, "p", "default")
            names = [e["name"] for e in (psc.get("status") or {}).get("resourceClaims") or []]
            return names if len(names) == 2 else None

        assert await wait_for(both_answers, what="our answer") == ["theirs", "gpu"]
        assert clock.monotonic() == start  # not the 30 s recheck
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
