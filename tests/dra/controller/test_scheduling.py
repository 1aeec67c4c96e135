"""PodSchedulingContext negotiation through a running DriverController: potentialNodes ->
unsuitableNodes, selectedNode -> allocation with reservedFor, and its failure paths."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from draplane import dra
from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.testing.apistate import events_for, seed_objects, wait_for
from draplane.testing.builders import (
    from_claim,
    make_claim,
    make_class,
    make_pod,
    make_scheduling_context as make_psc,
)

from .conftest import Env


@dataclass(frozen=True)
class Case:
    potential: tuple[str, ...] = ()
    selected: str = ""
    unsuitable: frozenset[str] = frozenset()
    allocate_error: str | None = None
    owned_by_pod: bool = True
    expect_status: list[Obj] = field(default_factory=list)
    expect_node: str | None = None
    expect_event: str | None = None
    expect_claim_event: str | None = None


CASES = [
    pytest.param(
        Case(
            potential=("node-0", "node-1", "node-2"),
            unsuitable=frozenset({"node-1"}),
            expect_status=[{"name": "gpu", "unsuitableNodes": ["node-1"]}],
        ),
        id="potential-nodes-answered",
    ),
    pytest.param(
        Case(
            potential=("node-0", "node-1"),
            selected="node-0",
            unsuitable=frozenset({"node-1"}),
            expect_status=[{"name": "gpu", "unsuitableNodes": ["node-1"]}],
            expect_node="node-0",
        ),
        id="selected-node-suitable-allocates",
    ),
    pytest.param(
        Case(
            selected="node-2",
            expect_status=[{"name": "gpu", "unsuitableNodes": []}],
            expect_node="node-2",
        ),
        id="selected-node-without-potential-nodes",
    ),
    pytest.param(
        Case(
            potential=("node-0", "node-1"),
            selected="node-0",
            unsuitable=frozenset({"node-0"}),
            expect_status=[{"name": "gpu", "unsuitableNodes": ["node-0"]}],
        ),
        id="selected-node-unsuitable-waits",
    ),
    pytest.param(
        Case(
            potential=("node-0", "node-1"),
            selected="node-0",
            allocate_error="exhausted",
            expect_status=[{"name": "gpu", "unsuitableNodes": ["node-0"]}],
            expect_event="allocation of one or more pod claims failed. Claim my-claim: exhausted.",
            expect_claim_event="allocation for pod default/my-pod on node node-0 failed: exhausted",
        ),
        id="failed-allocation-reports-selected-node-unsuitable",
    ),
]


async def seed_pod_with_claim(env: Env) -> Obj:
    _, pod, _ = await seed_objects(
        env.admin,
        make_class().obj(),
        make_pod().claim_ref("gpu", "my-claim").obj(),
        make_claim().obj(),
    )
    return pod


async def psc_status(env: Env) -> list[Obj] | None:
    psc = await env.admin.get(kinds.POD_SCHEDULING_CONTEXTS, "my-pod", "default")
    entries: list[Obj] | None = (psc.get("status") or {}).get("resourceClaims")
    return entries


@pytest.mark.parametrize("case", CASES)
async def test_negotiation(env: Env, case: Case) -> None:
    env.driver.unsuitable = set(case.unsuitable)
    env.driver.allocate_error = case.allocate_error
    pod = await seed_pod_with_claim(env)
    builder = make_psc(pod).potential_nodes(*case.potential)
    if case.selected:
        builder.selected_node(case.selected)
    [psc] = await seed_objects(env.admin, builder.obj())

    assert await wait_for(lambda: psc_status(env), what="PSC status") == case.expect_status
    claim = await env.admin.get(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    allocation = (claim.get("status") or {}).get("allocation")
    if case.expect_node is None:
        assert allocation is None
    else:
        assert allocation["resourceHandles"][0]["data"] == case.expect_node
        assert claim["status"]["reservedFor"] == [dra.pod_reference(pod)]
    if case.expect_event is not None:
        events = await wait_for(
            lambda: events_for(env.admin, psc, reason="Failed"), what="Failed event"
        )
        assert events[0]["message"] == case.expect_event
    if case.expect_claim_event is None:
        assert await events_for(env.admin, claim, reason="Failed") == []
    else:
        claim_events = await wait_for(
            lambda: events_for(env.admin, claim, reason="Failed"), what="claim's Failed event"
        )
        assert [e["message"] for e in claim_events] == [case.expect_claim_event]
        assert claim_events[0]["involvedObject"]["uid"] == meta.uid(claim)


async def test_obsolete_context_is_ignored(env: Env) -> None:
    pod = await seed_pod_with_claim(env)
    stranger = make_pod("stranger").obj()
    [psc] = await seed_objects(
        env.admin,
        make_psc(pod)
        .set("metadata.ownerReferences", [meta.owner_reference(stranger)])
        .potential_nodes("node-0")
        .selected_node("node-0")
        .obj(),
    )
    # A second pod's context being answered shows the first one's key has been worked.
    _, other = await seed_objects(
        env.admin,
        make_claim("other-claim").obj(),
        make_pod("other").claim_ref("gpu", "other-claim").obj(),
    )
    await seed_objects(env.admin, make_psc(other).potential_nodes("node-0").obj())
    await wait_for(lambda: _status_of(env, "other"), what="other PSC status")
    assert await psc_status(env) is None
    claim = await env.admin.get(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    assert not (claim.get("status") or {}).get("allocation")
    assert meta.name(psc) == "my-pod"


async def _status_of(env: Env, name: str) -> list[Obj] | None:
    psc = await env.admin.get(kinds.POD_SCHEDULING_CONTEXTS, name, "default")
    entries: list[Obj] | None = (psc.get("status") or {}).get("resourceClaims")
    return entries


async def test_allocated_claims_are_left_out_of_unsuitable_nodes(env: Env) -> None:
    """[1.29+]: the driver computes unsuitable nodes only for the claims still pending."""
    _, pod, _, _ = await seed_objects(
        env.admin,
        make_class().obj(),
        make_pod().claim_ref("a", "done").claim_ref("b", "pending").obj(),
        make_claim("done").allocation(node="node-0").obj(),
        make_claim("pending").obj(),
    )
    await seed_objects(env.admin, make_psc(pod).potential_nodes("node-0", "node-1").obj())
    entries = await wait_for(lambda: psc_status(env), what="PSC status")
    assert entries == [{"name": "b", "unsuitableNodes": []}]
    # Once per event (create, then the status update): always without the allocated claim.
    assert {tuple(call) for call in env.driver.unsuitable_calls} == {("pending",)}


async def test_template_claim_of_another_pod_is_an_error(env: Env) -> None:
    stranger = make_pod("stranger").obj()
    _, pod, claim = await seed_objects(
        env.admin,
        make_class().obj(),
        make_pod().claim_template("gpu", "tmpl").claim_status("gpu", "my-pod-gpu").obj(),
        from_claim(make_claim("my-pod-gpu").obj()).owned_by_pod(stranger).obj(),
    )
    [psc] = await seed_objects(env.admin, make_psc(pod).potential_nodes("node-0").obj())
    events = await wait_for(
        lambda: events_for(env.admin, psc, reason="Failed"), what="Failed event"
    )
    message = (
        "pod claim gpu: ResourceClaim default/my-pod-gpu was not created for pod "
        "default/my-pod (pod is not owner)"
    )
    assert events[0]["message"] == message
    # The foreign claim is told too: `kubectl describe resourceclaim` explains it.
    [claim_event] = await wait_for(
        lambda: events_for(env.admin, claim, reason="Failed"), what="claim's Failed event"
    )
    assert (claim_event["type"], claim_event["message"]) == ("Warning", message)
    assert await psc_status(env) is None


async def test_unsuitable_nodes_are_rechecked_periodically(
    env_recheck: tuple[Env, float],
) -> None:
    """§6.6 step 9 ("periodic"): nothing watches the driver's own capacity, so the answer is
    recomputed on a fixed delay (the helper's 30 s unless configured), on the controller's
    clock, for as long as the PodSchedulingContext exists."""
    env, delay = env_recheck
    assert delay in (30, 2)
    env.driver.unsuitable = {"node-1"}
    pod = await seed_pod_with_claim(env)
    await seed_objects(env.admin, make_psc(pod).potential_nodes("node-0", "node-1").obj())
    first = [{"name": "gpu", "unsuitableNodes": ["node-1"]}]
    assert await wait_for(lambda: psc_status(env), what="PSC status") == first

    async def quiet() -> bool:
        # The add event has been synced (the driver's own status write is no reason to sync).
        return len(env.driver.unsuitable_calls) >= 1

    await wait_for(quiet, what="first sync")
    env.driver.unsuitable = {"node-0"}
    env.clock.step(delay - 1)
    assert await psc_status(env) == first
    env.clock.step(1)
    second = [{"name": "gpu", "unsuitableNodes": ["node-0"]}]

    async def rechecked() -> bool:
        return await psc_status(env) == second

    await wait_for(rechecked, what="periodic recheck")


async def test_only_pending_delayed_claims_of_this_driver_are_negotiated(env: Env) -> None:
    """§6.6 step 4: a pod claim that needs no claim (status entry without a name), an
    Immediate claim and a claim of another driver's class are skipped."""
    _, _, pod, _, _, _ = await seed_objects(
        env.admin,
        make_class().obj(),
        make_class("other", driver="other.example.com").obj(),
        make_pod()
        .claim_template("none", "tmpl")
        .claim_status("none", None)
        .claim_ref("immediate", "immediate")
        .claim_ref("foreign", "foreign")
        .claim_ref("gpu", "my-claim")
        .obj(),
        make_claim("immediate").allocation_mode("Immediate").resource_class("missing").obj(),
        make_claim("foreign").resource_class("other").obj(),
        make_claim().obj(),
    )
    await seed_objects(
        env.admin, make_psc(pod).potential_nodes("node-0").selected_node("node-0").obj()
    )
    entries = await wait_for(lambda: psc_status(env), what="PSC status")
    assert entries == [{"name": "gpu", "unsuitableNodes": []}]
    assert {tuple(call) for call in env.driver.unsuitable_calls} == {("my-claim",)}
    claims = {
        meta.name(c): c for c in (await env.admin.list(kinds.RESOURCE_CLAIMS, "default"))["items"]
    }
    assert claims["my-claim"]["status"]["allocation"]
    assert not (claims["foreign"].get("status") or {}).get("allocation")
    assert not (claims["immediate"].get("status") or {}).get("allocation")


async def test_failing_unsuitable_nodes_is_reported(env: Env) -> None:
    env.driver.fail_in = "unsuitable"
    pod = await seed_pod_with_claim(env)
    [psc] = await seed_objects(env.admin, make_psc(pod).potential_nodes("node-0").obj())
    events = await wait_for(
        lambda: events_for(env.admin, psc, reason="Failed"), what="Failed event"
    )
    assert events[0]["message"] == "checking potential nodes: unsuitable failed"
    assert await psc_status(env) is None


async def test_without_set_reserved_for_the_allocation_is_not_reserved(
    env_without_reserved_for: Env,
) -> None:
    env = env_without_reserved_for
    pod = await seed_pod_with_claim(env)
    await seed_objects(env.admin, make_psc(pod).selected_node("node-0").obj())
    await wait_for(lambda: psc_status(env), what="PSC status")
    claim = await env.admin.get(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    assert claim["status"]["allocation"]["resourceHandles"][0]["data"] == "node-0"
    assert not claim["status"].get("reservedFor")
