"""DynamicResources branches that the API cannot reach (validation forbids the input, or an
earlier phase rejects it first), driven through static listers and hand-made state.

Spec §4.4 (pod claim without a source), §4.7 (unparsable availableOnNodes), §4.8 (the
defensive deallocationRequested and allocation-mode branches, an invalid class filter),
§4.10 (more than 128 feasible nodes) and §4.11 (a PodSchedulingContext of another pod).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane import dra
from draplane.api.kinds import POD_SCHEDULING_CONTEXTS, RESOURCE_CLAIMS, RESOURCE_CLASSES
from draplane.api.meta import Obj
from draplane.scheduler.framework import SUCCESS, CycleState, Handle, NodeInfo, PodInfo, Status
from draplane.scheduler.plugins.dynamicresources import DynamicResources
from draplane.scheduler.plugins.dynamicresources.claims import PodClaim
from draplane.scheduler.plugins.dynamicresources.state import STATE_KEY, StateData
from draplane.testing.apiobjects import StaticLister
from draplane.testing.builders import (
    from_claim,
    make_claim,
    make_class,
    make_node,
    make_pod,
    make_scheduling_context,
)

POD = make_pod("my-pod").claim_ref("my-resource", "my-claim").obj()
OTHER_POD = make_pod("other-pod").obj()
CLAIM = make_claim("my-claim").obj()
BAD_SELECTOR = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Bogus"}]}]}
BAD_SELECTOR_ERROR = (
    'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Bogus": '
    'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
)
WORKER = make_node("worker").obj()


def plugin(
    *, claims: tuple[Obj, ...] = (), classes: tuple[Obj, ...] = (), contexts: tuple[Obj, ...] = ()
) -> DynamicResources:
    listers = {
        RESOURCE_CLAIMS: StaticLister(list(claims)),
        RESOURCE_CLASSES: StaticLister(list(classes)),
        POD_SCHEDULING_CONTEXTS: StaticLister(list(contexts)),
    }
    return DynamicResources(Handle(None, listers))  # type: ignore[arg-type]


def state_with(*claims: Obj) -> CycleState:
    """A CycleState as PreFilter would have left it for these claims (no selectors)."""
    state = CycleState()
    state.write(
        STATE_KEY,
        StateData(
            claims=[PodClaim("my-resource", c) for c in claims],
            available_on_nodes=[None] * len(claims),
        ),
    )
    return state


def test_pre_enqueue_rejects_a_pod_claim_without_source() -> None:
    pod = make_pod("my-pod").claim_no_source("my-resource").obj()
    assert plugin().pre_enqueue(pod) == Status.unresolvable(
        'pod "default/my-pod", spec.resourceClaim "my-resource": none of the supported fields '
        "are set"
    )


def test_pre_filter_unparsable_available_on_nodes_is_an_error() -> None:
    claim = (
        from_claim(CLAIM).allocation().set("status.allocation.availableOnNodes", BAD_SELECTOR).obj()
    )
    state = CycleState()
    status = plugin(claims=(claim,)).pre_filter(state, PodInfo(POD))
    assert status == Status.error(BAD_SELECTOR_ERROR)
    assert state.read(STATE_KEY).claims == []


@dataclass(frozen=True)
class FilterCase:
    claim: Obj
    want: Status
    classes: tuple[Obj, ...] = (make_class("example").obj(),)


FILTER_CASES = [
    pytest.param(
        FilterCase(
            from_claim(CLAIM).deallocation_requested().obj(),
            Status.unresolvable("resourceclaim must be reallocated"),
        ),
        id="unallocated-deallocation-requested",
    ),
    pytest.param(
        FilterCase(
            from_claim(CLAIM).allocation_mode("Immediate").obj(),
            Status.error("internal error, unexpected allocation mode Immediate"),
        ),
        id="unallocated-immediate",
    ),
    pytest.param(
        FilterCase(
            CLAIM,
            Status.error(f"potential node filter: {BAD_SELECTOR_ERROR}"),
            classes=(make_class("example").set("suitableNodes", BAD_SELECTOR).obj(),),
        ),
        id="invalid-class-suitable-nodes",
    ),
    pytest.param(FilterCase(CLAIM, SUCCESS), id="delayed-no-information-yet"),
]


@pytest.mark.parametrize("case", FILTER_CASES)
def test_filter_defensive_branches(case: FilterCase) -> None:
    got = plugin(classes=case.classes).filter(
        state_with(case.claim), PodInfo(POD), NodeInfo(WORKER)
    )
    assert got == case.want


def test_pre_score_lists_at_most_128_random_feasible_nodes_sorted() -> None:
    nodes = [NodeInfo(make_node(f"node-{i:03d}").obj()) for i in range(130)]
    state = state_with(CLAIM)
    assert plugin().pre_score(state, PodInfo(POD), nodes) == SUCCESS
    data = state.read(STATE_KEY)
    assert data.scheduling_ctx is not None
    potential = data.scheduling_ctx["spec"]["potentialNodes"]
    assert len(potential) == dra.POD_SCHEDULING_NODE_LIST_MAX
    assert potential == sorted(set(potential))
    assert set(potential) <= {n.name for n in nodes}
    assert data.scheduling_ctx_dirty


@pytest.mark.parametrize(
    "claim",
    [
        pytest.param(CLAIM, id="pending-claim"),
        pytest.param(from_claim(CLAIM).allocation().obj(), id="allocated-claim"),
    ],
)
async def test_reserve_refuses_a_scheduling_context_of_another_pod(claim: Obj) -> None:
    psc = make_scheduling_context(OTHER_POD).name("my-pod").obj()
    got = await plugin(contexts=(psc,)).reserve(state_with(claim), PodInfo(POD), "worker")
    assert got == Status.error(
        f"PodSchedulingContext object with UID {psc['metadata']['uid']} is not owned by Pod "
        "default/my-pod"
    )
