"""syncClaim and allocateClaims through a running DriverController: immediate allocation,
finalizers, deallocation, classes of other drivers, parameter errors and retries."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.testing.apistate import events_for, seed_objects, wait_for
from draplane.testing.builders import from_claim, make_claim, make_class

from .conftest import DRIVER, Env

FINALIZER = DRIVER + "/deletion-protection"


async def claim_now(env: Env, name: str = "my-claim") -> Obj | None:
    try:
        return await env.admin.get(kinds.RESOURCE_CLAIMS, name, "default")
    except errors.StatusError as err:
        if errors.is_not_found(err):
            return None
        raise


async def allocated(env: Env, name: str = "my-claim") -> Obj | None:
    claim = await claim_now(env, name)
    return claim if claim is not None and (claim.get("status") or {}).get("allocation") else None


immediate_claim = make_claim().allocation_mode("Immediate")


async def test_immediate_claim_is_allocated_with_finalizer(env: Env) -> None:
    await seed_objects(env.admin, make_class().obj(), immediate_claim.obj())
    claim = await wait_for(lambda: allocated(env), what="allocation")
    assert claim["status"]["driverName"] == DRIVER
    assert claim["status"]["allocation"]["resourceHandles"] == [
        {"driverName": DRIVER, "data": "node-0"}
    ]
    assert meta.finalizers(claim) == [FINALIZER]
    assert not claim["status"].get("reservedFor")


@dataclass(frozen=True)
class Untouched:
    objects: tuple[Obj, ...]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            Untouched((make_class(driver="other.example.com").obj(), immediate_claim.obj())),
            id="class-of-another-driver",
        ),
        pytest.param(
            Untouched((make_class().obj(), make_claim().obj())),
            id="delayed-claim-waits-for-consumer",
        ),
    ],
)
async def test_claims_left_alone(env: Env, case: Untouched) -> None:
    await seed_objects(env.admin, *case.objects)
    await probe_queue_worked(env)
    claim = await claim_now(env)
    assert claim is not None
    assert not (claim.get("status") or {}).get("allocation")
    assert meta.finalizers(claim) == []
    assert await events_for(env.admin, claim, reason="Failed") == []


async def probe_queue_worked(env: Env) -> None:
    """An immediate claim of a second class gets allocated: keys added before it were worked."""
    await seed_objects(
        env.admin,
        make_class("probe-class").obj(),
        make_claim("probe").resource_class("probe-class").allocation_mode("Immediate").obj(),
    )
    await wait_for(lambda: allocated(env, "probe"), what="probe allocation")


@pytest.mark.parametrize(
    ("fail_in", "message"),
    [
        pytest.param(
            "class", "class parameters ConfigMap default/cp: class failed", id="class-parameters"
        ),
        pytest.param(
            "claim", "claim parameters ConfigMap default/p: claim failed", id="claim-parameters"
        ),
        pytest.param("allocate", "allocate: allocate failed", id="driver-allocate-raises"),
    ],
)
async def test_failures_become_warning_events_then_retry(
    env: Env, fail_in: str, message: str
) -> None:
    env.driver.fail_in = fail_in
    await seed_objects(
        env.admin,
        make_class().parameters("cp").obj(),
        from_claim(immediate_claim.obj()).parameters("p").obj(),
    )
    claim = await wait_for(lambda: claim_now(env), what="claim")
    events = await wait_for(
        lambda: events_for(env.admin, claim, reason="Failed"), what="Failed event"
    )
    assert events[0]["type"] == "Warning"
    assert events[0]["message"] == message
    env.driver.fail_in = ""
    # The retry waits for the rate limiter, on the injected clock.
    env.clock.step(5)
    claim = await wait_for(lambda: allocated(env), what="allocation after retry")
    assert meta.finalizers(claim) == [FINALIZER]


async def test_allocation_error_of_the_driver_is_reported(env: Env) -> None:
    env.driver.allocate_error = "no devices left"
    [_, claim] = await seed_objects(env.admin, make_class().obj(), immediate_claim.obj())
    events = await wait_for(
        lambda: events_for(env.admin, claim, reason="Failed"), what="Failed event"
    )
    assert events[0]["message"] == "allocate: no devices left"
    # The finalizer is added before the driver is asked, and kept for the retry.
    current = await claim_now(env)
    assert current is not None
    assert meta.finalizers(current) == [FINALIZER]
    assert not (current.get("status") or {}).get("allocation")


async def test_deallocation_requested_frees_and_removes_finalizer(env: Env) -> None:
    # What the claim controller does when a delayed-allocation claim loses its last user.
    await seed_objects(
        env.admin,
        make_class().obj(),
        make_claim().finalizer(FINALIZER).allocation(node="node-0").obj(),
    )
    claim = meta.deep_copy(await wait_for(lambda: allocated(env), what="allocated claim"))
    claim["status"]["deallocationRequested"] = True
    await env.admin.update(kinds.RESOURCE_CLAIMS, claim, subresource="status")

    async def released() -> Obj | None:
        current = await claim_now(env)
        return current if current is not None and not meta.finalizers(current) else None

    current = await wait_for(released, what="finalizer removal")
    assert env.driver.deallocated == ["my-claim"]
    status = current.get("status") or {}
    assert "allocation" not in status
    assert "driverName" not in status
    assert not status.get("deallocationRequested")


async def test_deleted_claim_is_deallocated_and_goes_away(env: Env) -> None:
    await seed_objects(env.admin, make_class().obj(), immediate_claim.obj())
    await wait_for(lambda: allocated(env), what="allocation")
    deleting = await env.admin.delete(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    assert meta.deletion_timestamp(deleting)

    async def gone() -> bool:
        return await claim_now(env) is None

    await wait_for(gone, what="claim deletion")
    # Deallocate is idempotent; a sync of a stale copy may call it once more.
    assert set(env.driver.deallocated) == {"my-claim"}


async def test_failed_deallocation_keeps_the_finalizer_and_retries(env: Env) -> None:
    await seed_objects(env.admin, make_class().obj(), immediate_claim.obj())
    await wait_for(lambda: allocated(env), what="allocation")
    env.driver.fail_in = "deallocate"
    await env.admin.delete(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    claim = await wait_for(lambda: claim_now(env), what="claim")
    events = await wait_for(
        lambda: events_for(env.admin, claim, reason="Failed"), what="Failed event"
    )
    assert events[0]["message"] == "deallocate: deallocate failed"
    current = await claim_now(env)
    assert current is not None
    assert meta.finalizers(current) == [FINALIZER]
    env.driver.fail_in = ""
    env.clock.step(5)

    async def gone() -> bool:
        return await claim_now(env) is None

    await wait_for(gone, what="claim deletion after retry")
    assert set(env.driver.deallocated) == {"my-claim"}


async def test_claim_in_use_is_not_deallocated(env: Env) -> None:
    pod_ref = {"resource": "pods", "name": "user", "uid": "pod-uid-1"}
    await seed_objects(
        env.admin,
        make_class().obj(),
        make_claim()
        .finalizer(FINALIZER)
        .allocation(node="node-0")
        .set("status.reservedFor", [pod_ref])
        .obj(),
    )
    await env.admin.delete(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    await probe_queue_worked(env)
    current = await claim_now(env)
    assert current is not None
    assert meta.finalizers(current) == [FINALIZER]
    assert env.driver.deallocated == []


async def test_class_changed_to_this_driver_is_picked_up_by_the_requeue(env: Env) -> None:
    """§6.4 row 5: a class of another driver is not final; the claim is requeued with backoff
    (classes are not watched), so a later change of the class is noticed."""
    [resource_class, _] = await seed_objects(
        env.admin, make_class(driver="other.example.com").obj(), immediate_claim.obj()
    )
    await probe_queue_worked(env)
    changed = meta.deep_copy(resource_class)
    changed["driverName"] = DRIVER
    await env.admin.update(kinds.RESOURCE_CLASSES, changed)

    async def allocated_after_backoff() -> Obj | None:
        env.clock.step(1)
        return await allocated(env)

    claim = await wait_for(allocated_after_backoff, what="allocation after the class change")
    assert meta.finalizers(claim) == [FINALIZER]


async def test_missing_class_is_reported(env: Env) -> None:
    [claim] = await seed_objects(env.admin, immediate_claim.obj())
    events = await wait_for(
        lambda: events_for(env.admin, claim, reason="Failed"), what="Failed event"
    )
    assert events[0]["message"] == 'resourceclasses.resource.k8s.io "example" not found'


async def test_driver_without_result_is_an_error(env: Env) -> None:
    env.driver.omit_allocation = True
    [_, claim] = await seed_objects(env.admin, make_class().obj(), immediate_claim.obj())
    events = await wait_for(
        lambda: events_for(env.admin, claim, reason="Failed"), what="Failed event"
    )
    assert events[0]["message"] == "allocate: allocating claim: missing allocation from driver"
    current = await claim_now(env)
    assert current is not None
    assert not (current.get("status") or {}).get("allocation")


async def test_deallocation_of_a_claim_without_our_finalizer_is_left_alone(env: Env) -> None:
    """§6.4 row 2: another driver's (or an already released) claim is not ours to free."""
    await seed_objects(
        env.admin,
        make_class().obj(),
        make_claim().allocation(node="node-0").deallocation_requested().obj(),
    )
    await probe_queue_worked(env)
    current = await claim_now(env)
    assert current is not None
    assert current["status"]["deallocationRequested"] is True
    assert current["status"]["allocation"]
    assert env.driver.deallocated == []


async def test_deleted_unallocated_claim_stops_allocation_then_goes_away(env: Env) -> None:
    """§6.4 row 2, not allocated: Deallocate aborts an allocation in flight, then the finalizer
    goes."""
    await seed_objects(env.admin, make_class().obj(), make_claim().finalizer(FINALIZER).obj())
    await env.admin.delete(kinds.RESOURCE_CLAIMS, "my-claim", "default")

    async def gone() -> bool:
        return await claim_now(env) is None

    await wait_for(gone, what="claim deletion")
    assert set(env.driver.deallocated) == {"my-claim"}


async def test_failed_stop_of_allocation_is_reported(env: Env) -> None:
    env.driver.fail_in = "deallocate"
    await seed_objects(env.admin, make_class().obj(), make_claim().finalizer(FINALIZER).obj())
    claim = await env.admin.delete(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    events = await wait_for(
        lambda: events_for(env.admin, claim, reason="Failed"), what="Failed event"
    )
    assert events[0]["message"] == "stop allocation: deallocate failed"
    current = await claim_now(env)
    assert current is not None
    assert meta.finalizers(current) == [FINALIZER]
