"""DynamicResources tells a claim when the scheduler fails to write it: reserving it for the
pod, asking for its deallocation, undoing a reservation. The claim gets a Warning
`FailedScheduling` event (as the pod does), so `kubectl describe resourceclaim` explains it.

Each case hands the plugin a claim as it was before another writer changed it (a stale
resourceVersion), so the real API server rejects the write with a conflict.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest

from draplane import dra
from draplane.api.kinds import POD_SCHEDULING_CONTEXTS, RESOURCE_CLAIMS, RESOURCE_CLASSES
from draplane.api.meta import Obj, deep_copy
from draplane.client.events import EventRecorder
from draplane.client.interface import Client
from draplane.scheduler.framework import Code, CycleState, Handle, PodInfo
from draplane.scheduler.plugins.dynamicresources import DynamicResources
from draplane.scheduler.plugins.dynamicresources.claims import PodClaim
from draplane.scheduler.plugins.dynamicresources.state import STATE_KEY, StateData
from draplane.testing.apiobjects import StaticLister
from draplane.testing.apistate import events_for, seed_objects
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.cluster import Cluster

CONFLICT = (
    'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "my-claim": the object '
    "has been modified; please apply your changes to the latest version and try again"
)


@dataclass
class Env:
    client: Client
    recorder: EventRecorder
    plugin: DynamicResources
    pod: Obj


@pytest.fixture
async def env(cluster: Cluster) -> AsyncIterator[Env]:
    client = cluster.client()
    recorder = EventRecorder(client, "default-scheduler")
    listers = {rt: StaticLister([]) for rt in (RESOURCE_CLAIMS, RESOURCE_CLASSES)}
    listers[POD_SCHEDULING_CONTEXTS] = StaticLister([])
    plugin = DynamicResources(Handle(client, listers, recorder))
    [pod] = await seed_objects(client, make_pod().claim_ref("gpu", "my-claim").obj())
    try:
        yield Env(client, recorder, plugin, pod)
    finally:
        await recorder.flush()


async def stale_claim(env: Env, *, reserved: bool) -> Obj:
    """The claim as the scheduler read it, before another writer changed it."""
    builder = make_claim().allocation(node="node-0")
    if reserved:
        builder.reserved_for(env.pod)
    [claim] = await seed_objects(env.client, builder.obj())
    changed = deep_copy(claim)
    changed["metadata"]["labels"] = {"touched": "by-someone-else"}
    await env.client.update(RESOURCE_CLAIMS, changed)
    return claim


def state_with(claim: Obj) -> CycleState:
    state = CycleState()
    state.write(
        STATE_KEY,
        StateData(
            claims=[PodClaim("gpu", claim)], available_on_nodes=[None], unavailable_claims={0}
        ),
    )
    return state


async def pre_bind(env: Env, state: CycleState) -> Code | None:
    return (await env.plugin.pre_bind(state, PodInfo(env.pod), "node-0")).code


async def post_filter(env: Env, state: CycleState) -> Code | None:
    return (await env.plugin.post_filter(state, PodInfo(env.pod), {})).code


async def unreserve(env: Env, state: CycleState) -> Code | None:
    await env.plugin.unreserve(state, PodInfo(env.pod), "node-0")
    return None


@dataclass(frozen=True)
class Case:
    phase: Callable[[Env, CycleState], Awaitable[Code | None]]
    reserved: bool
    code: Code | None
    message: str


CASES = [
    pytest.param(
        Case(pre_bind, False, Code.ERROR, "reserving the claim for pod default/my-pod: "),
        id="pre-bind-reservation",
    ),
    pytest.param(
        Case(post_filter, False, Code.ERROR, "requesting deallocation for pod default/my-pod: "),
        id="post-filter-deallocation-request",
    ),
    pytest.param(
        Case(unreserve, True, None, "unreserving the claim for pod default/my-pod: "),
        id="unreserve",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_failed_claim_write_is_an_event_on_the_claim(env: Env, case: Case) -> None:
    claim = await stale_claim(env, reserved=case.reserved)

    assert await case.phase(env, state_with(claim)) == case.code

    await env.recorder.flush()
    [event] = await events_for(env.client, claim)
    assert (event["type"], event["reason"], event["message"]) == (
        "Warning",
        "FailedScheduling",
        case.message + CONFLICT,
    )
    assert event["involvedObject"]["uid"] == claim["metadata"]["uid"]
    assert event["source"] == {"component": "default-scheduler"}
    live = await env.client.get(RESOURCE_CLAIMS, "my-claim", "default")
    assert dra.is_reserved_for_pod(env.pod, live) == case.reserved
