"""Simulated nodes: registration, leases, preparing claims and running pods, completion,
deletion, claims that are not ready, and a node restart."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.node import (
    CLAIMS_PREPARED,
    LEASE_NAMESPACE,
    LEASE_RENEW_JITTER,
    LEASE_RENEW_SECONDS,
    NOT_READY,
    RUN_SECONDS_ANNOTATION,
)
from draplane.testing.apistate import events_for, seed_objects, wait_for
from draplane.testing.builders import from_claim, make_claim, make_class, make_pod

from .conftest import Env, allocated

pod_with_claim = make_pod().claim_ref("gpu", "my-claim")


async def phase_is(env: Env, phase: str, name: str = "my-pod") -> Obj | None:
    pod = await env.pod(name)
    return pod if (pod.get("status") or {}).get("phase") == phase else None


async def seed_ready_pod(env: Env, *, node: str, pod: Obj | None = None) -> Obj:
    """A pod with an allocated claim reserved for it, available on `node`."""
    _, stored_pod, _ = await seed_objects(
        env.admin,
        make_class().obj(),
        pod if pod is not None else pod_with_claim.obj(),
        allocated(make_claim(), node=node, device="dev-3")
        .reserved_for(pod if pod is not None else pod_with_claim.obj())
        .obj(),
    )
    return stored_pod


async def test_nodes_register_with_leases(env: Env) -> None:
    await env.start_nodes(2)
    nodes = await env.admin.list(kinds.NODES)
    assert [meta.name(n) for n in nodes["items"]] == ["node-0", "node-1"]
    node = nodes["items"][0]
    assert meta.labels(node)["kubernetes.io/hostname"] == "node-0"
    assert node["status"]["capacity"]["cpu"] == "4"
    assert node["status"]["allocatable"]["memory"] == "32Gi"
    assert node["status"]["capacity"]["pods"] == "110"
    assert [c["type"] for c in node["status"]["conditions"]] == ["Ready"]
    lease = await env.admin.get(kinds.LEASES, "node-0", LEASE_NAMESPACE)
    assert lease["spec"]["holderIdentity"] == "node-0"
    first_renewal = lease["spec"]["renewTime"]
    env.clock.step(LEASE_RENEW_SECONDS * (1 + LEASE_RENEW_JITTER))

    async def renewed() -> bool:
        current = await env.admin.get(kinds.LEASES, "node-0", LEASE_NAMESPACE)
        return bool(current["spec"]["renewTime"] != first_renewal)

    await wait_for(renewed, what="lease renewal")


async def test_pod_with_claim_runs_on_its_node(env: Env) -> None:
    await env.start_nodes(2)
    pod = await seed_ready_pod(env, node="node-1")
    await env.bind(pod, "node-1")
    running = await wait_for(lambda: phase_is(env, "Running"), what="Running")
    status = running["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "PodReadyToStartContainers": "True",
        "Initialized": "True",
        "Ready": "True",
        "ContainersReady": "True",
        "PodScheduled": "True",
    }
    assert status["podIP"]
    assert status["startTime"]
    assert [list(s["state"]) for s in status["containerStatuses"]] == [["running"]]
    events = await wait_for(
        lambda: events_for(env.admin, running, reason=CLAIMS_PREPARED), what="ClaimsPrepared"
    )
    assert events[0]["message"] == (
        "Prepared resource claims: my-claim (driver.example.com/gpu=dev-3)"
    )
    claim = await env.admin.get(kinds.RESOURCE_CLAIMS, "my-claim", "default")
    assert list(env.plugin("node-1").prepared) == [meta.uid(claim)]
    assert env.plugin("node-0").prepared == {}


@dataclass(frozen=True)
class NotReady:
    claim: Obj
    message: str


NOT_READY_CASES = [
    pytest.param(
        NotReady(make_claim().obj(), "resource claim my-claim is not allocated yet"),
        id="not-allocated",
    ),
    pytest.param(
        NotReady(
            allocated(make_claim(), node="node-1").obj(),
            "pod default/my-pod(<uid>) is not allowed to use resource claim my-claim(<claim-uid>)",
        ),
        id="not-reserved-for-pod",
    ),
    pytest.param(
        NotReady(
            allocated(make_claim(), node="node-0").reserved_for(pod_with_claim.obj()).obj(),
            "resource claim my-claim is not available on node node-1",
        ),
        id="not-available-on-this-node",
    ),
]


@pytest.mark.parametrize("case", NOT_READY_CASES)
async def test_claim_not_ready_waits_with_warning_then_runs(env: Env, case: NotReady) -> None:
    await env.start_nodes(2)
    _, pod, claim = await seed_objects(
        env.admin, make_class().obj(), pod_with_claim.obj(), case.claim
    )
    await env.bind(pod, "node-1")
    events = await wait_for(
        lambda: events_for(env.admin, pod, reason=NOT_READY), what="ClaimNotReady event"
    )
    assert events[0]["type"] == "Warning"
    assert events[0]["message"] == case.message.replace("<uid>", meta.uid(pod)).replace(
        "<claim-uid>", meta.uid(claim)
    )
    pending = await wait_for(lambda: phase_is(env, "Pending"), what="Pending status")
    [waiting] = pending["status"]["containerStatuses"]
    assert waiting["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert (waiting["ready"], waiting["started"], waiting["containerID"]) == (False, False, "")
    assert {c["type"]: c["status"] for c in pending["status"]["conditions"]} == {
        "PodReadyToStartContainers": "False",
        "Initialized": "True",
        "Ready": "False",
        "ContainersReady": "False",
        "PodScheduled": "True",
    }
    # The driver and scheduler catch up; the node notices on its next retry.
    if (claim.get("status") or {}).get("allocation"):
        # An allocation is immutable: a wrong one is removed first, as deallocation does.
        cleared = meta.deep_copy(claim)
        cleared["status"] = {}
        claim = await env.admin.update(kinds.RESOURCE_CLAIMS, cleared, subresource="status")
    fixed = allocated(from_claim(claim), node="node-1").obj()
    fixed["status"]["reservedFor"] = [{"resource": "pods", "name": "my-pod", "uid": meta.uid(pod)}]
    await env.admin.update(kinds.RESOURCE_CLAIMS, fixed, subresource="status")
    env.clock.step(10)
    await wait_for(lambda: phase_is(env, "Running"), what="Running after the claim is ready")


async def test_run_seconds_completes_and_unprepares(env: Env) -> None:
    await env.start_nodes(1)
    pod = await seed_ready_pod(
        env,
        node="node-0",
        pod=pod_with_claim.annotation(RUN_SECONDS_ANNOTATION, "30").restart_policy("Never").obj(),
    )
    await env.bind(pod, "node-0")
    await wait_for(lambda: phase_is(env, "Running"), what="Running")
    assert len(env.plugin("node-0").prepared) == 1
    env.clock.step(29)
    assert (await env.pod())["status"]["phase"] == "Running"
    env.clock.step(1)
    done = await wait_for(lambda: phase_is(env, "Succeeded"), what="Succeeded")
    [container] = done["status"]["containerStatuses"]
    assert container["state"]["terminated"]["exitCode"] == 0
    assert container["state"]["terminated"]["reason"] == "Completed"
    assert env.plugin("node-0").prepared == {}


async def test_deleted_pod_is_unprepared_and_removed(env: Env) -> None:
    await env.start_nodes(1)
    pod = await seed_ready_pod(env, node="node-0")
    await env.bind(pod, "node-0")
    await wait_for(lambda: phase_is(env, "Running"), what="Running")
    deleting = await env.admin.delete(kinds.PODS, "my-pod", "default")
    assert meta.deletion_timestamp(deleting)

    async def gone() -> bool:
        try:
            await env.pod()
        except errors.StatusError as err:
            return errors.is_not_found(err)
        return False

    await wait_for(gone, what="pod removal")
    assert env.plugin("node-0").prepared == {}


@dataclass(frozen=True)
class Stopped:
    ready: bool
    phase: str
    terminated: Obj


STOPPED_CASES = [
    pytest.param(
        Stopped(True, "Succeeded", {"exitCode": 0, "reason": "Completed"}),
        id="running-pod-stops",
    ),
    pytest.param(
        Stopped(
            False,
            "Failed",
            {
                "exitCode": 137,
                "reason": "ContainerStatusUnknown",
                "message": "The container could not be located when the pod was terminated",
            },
        ),
        id="pod-that-never-started",
    ),
]


@pytest.mark.parametrize("case", STOPPED_CASES)
async def test_deleted_pod_reports_terminal_phase_before_its_delete(
    env: Env, case: Stopped
) -> None:
    """A pod held by another finalizer (as a foreground deletion holds it) stays with a
    terminal phase once the node stopped it: its claims' reservations can then be released."""
    await env.start_nodes(1)
    held = make_pod().claim_ref("gpu", "my-claim").finalizer("example.com/keep")
    if case.ready:
        pod = await seed_ready_pod(env, node="node-0", pod=held.obj())
        await env.bind(pod, "node-0")
        await wait_for(lambda: phase_is(env, "Running"), what="Running")
    else:
        _, pod = await seed_objects(env.admin, make_class().obj(), held.obj())
        await env.bind(pod, "node-0")
        await wait_for(
            lambda: events_for(env.admin, pod, reason=NOT_READY), what="ClaimNotReady event"
        )
    await env.admin.delete(kinds.PODS, "my-pod", "default")

    stopped = await wait_for(lambda: phase_is(env, case.phase), what=case.phase)
    [container] = stopped["status"]["containerStatuses"]
    state = container["state"]["terminated"]
    assert {k: state[k] for k in case.terminated} == case.terminated
    assert {c["type"]: c["status"] for c in stopped["status"]["conditions"]}["Ready"] == "False"
    finalized = await wait_for(
        lambda: _grace_finalized(env), what="the node's DELETE with grace period 0"
    )
    assert meta.finalizers(finalized) == ["example.com/keep"]
    assert env.plugin("node-0").prepared == {}


async def _grace_finalized(env: Env) -> Obj | None:
    pod = await env.pod()
    return pod if pod["metadata"].get("deletionGracePeriodSeconds") == 0 else None


async def test_restarted_node_resyncs_without_preparing_again(env: Env) -> None:
    await env.start_nodes(1)
    pod = await seed_ready_pod(env, node="node-0")
    await env.bind(pod, "node-0")
    running = await wait_for(lambda: phase_is(env, "Running"), what="Running")
    await wait_for(
        lambda: events_for(env.admin, running, reason=CLAIMS_PREPARED), what="ClaimsPrepared"
    )
    await env.stop_nodes()

    nodes = await env.start_nodes(1)
    await wait_for(lambda: _knows(nodes.kubelets["node-0"].running_pods), what="resync")
    again = await env.pod()
    assert again["metadata"]["resourceVersion"] == running["metadata"]["resourceVersion"]
    [event] = await events_for(env.admin, running, reason=CLAIMS_PREPARED)
    assert event.get("count", 1) == 1
    assert len(env.plugin("node-0").prepared) == 1
    # The restarted node still unprepares on deletion.
    await env.admin.delete(kinds.PODS, "my-pod", "default")
    await wait_for(lambda: _empty(env.plugin("node-0").prepared), what="unprepare")


async def _knows(pods: list[object]) -> bool:
    return bool(pods)


async def _empty(prepared: dict[str, object]) -> bool:
    return not prepared
