"""Queueing hints of DynamicResources (spec §4.5, §4.6), table-driven with 1.28 hint names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api.meta import Obj
from draplane.scheduler.framework import QueueingHint
from draplane.scheduler.plugins.dynamicresources.hints import (
    CLAIM_SELECTOR,
    SCHEDULING_CONTEXT_SELECTOR,
    is_schedulable_after_claim_change,
    is_schedulable_after_scheduling_context_change,
)
from draplane.testing.apiobjects import StaticLister
from draplane.testing.builders import (
    from_claim,
    from_pod,
    from_scheduling_context,
    make_claim,
    make_pod,
    make_scheduling_context,
)

SKIP = QueueingHint.QUEUE_SKIP
AFTER_BACKOFF = QueueingHint.QUEUE_AFTER_BACKOFF
IMMEDIATELY = QueueingHint.QUEUE_IMMEDIATELY


@dataclass(frozen=True)
class Tombstone:
    key: str
    obj: Obj


POD = make_pod("my-pod").claim_ref("my-resource", "my-claim").obj()
POD_TWO = from_pod(POD).claim_ref("my-resource-2", "my-claim-2").obj()
POD_TEMPLATE = make_pod("my-pod").claim_template("my-resource", "tmpl").obj()
CLAIM = make_claim("my-claim").obj()
CLAIM_2 = make_claim("my-claim-2").obj()
OTHER_CLAIM = make_claim("other-claim").obj()
ALLOCATED = from_claim(CLAIM).allocation().obj()
WITH_FINALIZER = from_claim(CLAIM).finalizer("driver.example.com/deletion-protection").obj()

IMMEDIATE_2 = from_claim(CLAIM_2).allocation_mode("Immediate").obj()
UNRESERVED = from_claim(ALLOCATED).set("status.reservedFor", []).obj()
WITH_FINALIZER_UNRESERVED = from_claim(UNRESERVED).finalizer("x.example.com/keep").obj()

PSC = make_scheduling_context(POD).potential_nodes("worker").obj()
PSC_OTHER_NAMESPACE = from_scheduling_context(PSC).namespace("other").obj()
PSC_INFO = from_scheduling_context(PSC).unsuitable_nodes("my-resource").obj()
PSC_INFO_TWO = from_scheduling_context(PSC_INFO).unsuitable_nodes("my-resource-2").obj()
PSC_BAD_SELECTED = (
    from_scheduling_context(PSC)
    .selected_node("worker")
    .unsuitable_nodes("my-resource", "worker")
    .obj()
)
PSC_INFO_SELECTED = from_scheduling_context(PSC_INFO).selected_node("worker").obj()
PSC_INFO_LABELED = from_scheduling_context(PSC_INFO).label("a", "b").obj()
# The same driver answer without the empty list (apiequality.Semantic: still equal).
PSC_INFO_NO_LIST_SELECTED = from_scheduling_context(PSC_INFO_SELECTED).obj()
del PSC_INFO_NO_LIST_SELECTED["status"]["resourceClaims"][0]["unsuitableNodes"]
OTHER_PSC = make_scheduling_context(make_pod("other-pod").obj()).obj()
PSC_SELECTED = from_scheduling_context(PSC).selected_node("worker").obj()
PSC_OTHER_UNSUITABLE = (
    from_scheduling_context(PSC_INFO_SELECTED).unsuitable_nodes("other", "worker").obj()
)

POD_TWO_TEMPLATES = (
    make_pod("my-pod")
    .claim_template("my-resource", "tmpl")
    .claim_template("my-resource-2", "tmpl")
    .claim_status("my-resource", "my-claim")
    .claim_status("my-resource-2", "my-claim-2")
    .obj()
)


@dataclass(frozen=True)
class HintCase:
    pod: Obj
    old: Any
    new: Any
    want: QueueingHint
    claims: tuple[Obj, ...] = (CLAIM,)


CLAIM_CASES = [
    pytest.param(HintCase(POD, CLAIM, None, SKIP), id="skip-deletes"),
    pytest.param(HintCase(POD, None, "not-a-claim", AFTER_BACKOFF), id="backoff-wrong-new-object"),
    pytest.param(HintCase(POD_TEMPLATE, None, CLAIM, SKIP), id="skip-claim-not-recorded-yet"),
    pytest.param(HintCase(POD, None, CLAIM, SKIP, claims=()), id="skip-own-claim-missing"),
    pytest.param(
        HintCase(POD, None, OTHER_CLAIM, SKIP, claims=(CLAIM, OTHER_CLAIM)),
        id="skip-unrelated-claim",
    ),
    pytest.param(HintCase(POD, None, CLAIM, IMMEDIATELY), id="queue-on-add"),
    pytest.param(HintCase(POD, "not-a-claim", CLAIM, AFTER_BACKOFF), id="backoff-wrong-old-object"),
    pytest.param(
        HintCase(POD, CLAIM, WITH_FINALIZER, SKIP, claims=(WITH_FINALIZER,)),
        id="skip-adding-finalizer",
    ),
    pytest.param(
        HintCase(POD, CLAIM, ALLOCATED, IMMEDIATELY, claims=(ALLOCATED,)),
        id="queue-on-status-change",
    ),
    pytest.param(
        HintCase(POD, ALLOCATED, UNRESERVED, SKIP, claims=(UNRESERVED,)),
        id="skip-semantically-equal-status",
    ),
    pytest.param(
        HintCase(
            POD, UNRESERVED, WITH_FINALIZER_UNRESERVED, SKIP, claims=(WITH_FINALIZER_UNRESERVED,)
        ),
        id="skip-finalizer-on-allocated-claim",
    ),
    pytest.param(
        HintCase(
            POD,
            ALLOCATED,
            from_claim(ALLOCATED).deallocation_requested().obj(),
            IMMEDIATELY,
            claims=(ALLOCATED,),
        ),
        id="queue-on-deallocation-requested",
    ),
    pytest.param(
        HintCase(
            POD, Tombstone("default/my-claim", CLAIM), ALLOCATED, IMMEDIATELY, claims=(ALLOCATED,)
        ),
        id="queue-on-status-change-tombstone-old",
    ),
]


@pytest.mark.parametrize("case", CLAIM_CASES)
def test_claim_change(case: HintCase) -> None:
    got = is_schedulable_after_claim_change(
        pod=case.pod, old=case.old, new=case.new, claims=StaticLister(list(case.claims))
    )
    assert got is case.want


ALLOCATED_2 = from_claim(CLAIM_2).allocation().obj()
DEALLOCATING_2 = from_claim(CLAIM_2).deallocation_requested().obj()
PSC_TWO_SELECTED = from_scheduling_context(PSC_INFO_TWO).selected_node("worker").obj()
PSC_TWO_REJECTED = (
    from_scheduling_context(PSC_TWO_SELECTED).unsuitable_nodes("my-resource-2", "worker").obj()
)


@dataclass(frozen=True)
class OtherClaimCase:
    claims: tuple[Obj, ...]
    contexts: tuple[Obj, ...]
    want: QueueingHint


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            OtherClaimCase((ALLOCATED, CLAIM_2), (PSC_TWO_SELECTED,), SKIP),
            id="skip-while-another-claim-is-being-allocated",
        ),
        pytest.param(
            OtherClaimCase((ALLOCATED, ALLOCATED_2), (PSC_TWO_SELECTED,), IMMEDIATELY),
            id="queue-once-every-claim-is-allocated",
        ),
        pytest.param(
            OtherClaimCase((ALLOCATED, CLAIM_2), (PSC_TWO_REJECTED,), IMMEDIATELY),
            id="queue-when-the-selected-node-was-rejected",
        ),
        pytest.param(
            OtherClaimCase((ALLOCATED, CLAIM_2), (PSC_INFO_TWO,), IMMEDIATELY),
            id="queue-when-no-node-is-selected",
        ),
        pytest.param(
            OtherClaimCase((ALLOCATED, CLAIM_2), (), IMMEDIATELY),
            id="queue-without-scheduling-context",
        ),
        pytest.param(
            OtherClaimCase((ALLOCATED, DEALLOCATING_2), (PSC_TWO_SELECTED,), IMMEDIATELY),
            id="queue-when-the-other-claim-is-being-deallocated",
        ),
        pytest.param(
            OtherClaimCase((ALLOCATED, IMMEDIATE_2), (PSC_TWO_SELECTED,), IMMEDIATELY),
            id="queue-when-the-other-claim-is-immediate",
        ),
    ],
)
def test_claim_allocated_while_another_claim_waits_for_its_driver(case: OtherClaimCase) -> None:
    # [deviation] Upstream queues at once and the attempt fails on the other claim.
    got = is_schedulable_after_claim_change(
        pod=POD_TWO,
        old=CLAIM,
        new=ALLOCATED,
        claims=StaticLister(list(case.claims)),
        contexts=StaticLister(list(case.contexts)),
    )
    assert got is case.want


PSC_CASES = [
    pytest.param(HintCase(POD, PSC, None, SKIP), id="skip-deleted"),
    pytest.param(
        HintCase(POD, Tombstone("default/my-pod", PSC), None, SKIP), id="skip-missed-deleted"
    ),
    pytest.param(HintCase(POD, "not-a-psc", PSC, AFTER_BACKOFF), id="backoff-wrong-old-object"),
    pytest.param(HintCase(POD, None, "not-a-psc", AFTER_BACKOFF), id="backoff-wrong-new-object"),
    pytest.param(HintCase(POD, None, OTHER_PSC, SKIP), id="skip-unrelated-object"),
    pytest.param(HintCase(POD, None, PSC_OTHER_NAMESPACE, SKIP), id="skip-other-namespace"),
    pytest.param(
        HintCase(POD_TWO, None, PSC_INFO, IMMEDIATELY, claims=(CLAIM, IMMEDIATE_2)),
        id="queue-immediate-claims-need-no-info",
    ),
    pytest.param(HintCase(POD, None, PSC, SKIP, claims=()), id="skip-pod-claims-missing"),
    pytest.param(HintCase(POD, None, PSC, SKIP), id="skip-waiting"),
    pytest.param(
        HintCase(POD_TWO, None, PSC_INFO, SKIP, claims=(CLAIM, CLAIM_2)), id="skip-partial-info"
    ),
    pytest.param(HintCase(POD, None, PSC_INFO, IMMEDIATELY), id="queue-new-info"),
    pytest.param(HintCase(POD, PSC, PSC_INFO, IMMEDIATELY), id="queue-more-info"),
    pytest.param(
        HintCase(POD_TWO, PSC_INFO, PSC_INFO_TWO, IMMEDIATELY, claims=(CLAIM, CLAIM_2)),
        id="queue-all-info",
    ),
    pytest.param(
        HintCase(POD, PSC_BAD_SELECTED, PSC_BAD_SELECTED, IMMEDIATELY), id="queue-bad-selected-node"
    ),
    pytest.param(HintCase(POD, PSC_INFO, PSC_INFO_SELECTED, SKIP), id="skip-spec-changes"),
    pytest.param(
        HintCase(POD, PSC_INFO, PSC_INFO_NO_LIST_SELECTED, SKIP),
        id="skip-spec-changes-status-semantically-equal",
    ),
    pytest.param(
        HintCase(POD, PSC_INFO, PSC_INFO_LABELED, AFTER_BACKOFF), id="backoff-other-changes"
    ),
    pytest.param(
        HintCase(POD, PSC, PSC, AFTER_BACKOFF, claims=(ALLOCATED,)),
        id="allocated-claims-need-no-info",
    ),
    # [deviation] The driver answered and accepted the selected node: it allocates there, and
    # the claim hint requeues the pod once the allocation is seen.
    pytest.param(
        HintCase(POD, PSC_SELECTED, PSC_INFO_SELECTED, SKIP), id="skip-selected-node-accepted"
    ),
    pytest.param(
        HintCase(POD, None, PSC_INFO_SELECTED, SKIP), id="skip-created-with-accepted-node"
    ),
    pytest.param(
        HintCase(POD, PSC_SELECTED, PSC_INFO_SELECTED, IMMEDIATELY, claims=(ALLOCATED,)),
        id="queue-selected-node-accepted-claim-already-allocated",
    ),
    pytest.param(
        HintCase(POD, PSC_SELECTED, PSC_OTHER_UNSUITABLE, IMMEDIATELY),
        id="queue-selected-node-unsuitable-for-any-claim",
    ),
]


@pytest.mark.parametrize("case", PSC_CASES)
def test_scheduling_context_change(case: HintCase) -> None:
    got = is_schedulable_after_scheduling_context_change(
        pod=case.pod, old=case.old, new=case.new, claims=StaticLister(list(case.claims))
    )
    assert got is case.want


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(POD_TWO, ["default/my-claim", "default/my-claim-2"], id="claim-references"),
        pytest.param(POD_TWO_TEMPLATES, ["default/my-claim", "default/my-claim-2"], id="recorded"),
        pytest.param(POD_TEMPLATE, [], id="template-claim-not-recorded-yet"),
        pytest.param(
            make_pod("my-pod").claim_template("a", "t").claim_status("a", None).obj(),
            [],
            id="no-claim-needed",
        ),
    ],
)
def test_claim_selector_keys_are_the_claims_the_pod_names(pod: Obj, want: list[str]) -> None:
    assert CLAIM_SELECTOR.pod_keys(pod) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, CLAIM, "default/my-claim", id="add"),
        pytest.param(CLAIM, ALLOCATED, "default/my-claim", id="update"),
        pytest.param(CLAIM, None, "", id="delete-concerns-nobody"),
        pytest.param(None, "not-a-claim", None, id="odd-object-concerns-everybody"),
    ],
)
def test_claim_selector_event_key(old: Any, new: Any, want: str | None) -> None:
    assert CLAIM_SELECTOR.event_key(old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, PSC, "default/my-pod", id="add"),
        pytest.param(PSC, PSC_INFO, "default/my-pod", id="update"),
        pytest.param(Tombstone("default/my-pod", PSC), None, "", id="delete-concerns-nobody"),
        pytest.param("not-a-psc", PSC, None, id="odd-old-object-concerns-everybody"),
        pytest.param(None, "not-a-psc", None, id="odd-new-object-concerns-everybody"),
    ],
)
def test_scheduling_context_selector(old: Any, new: Any, want: str | None) -> None:
    assert SCHEDULING_CONTEXT_SELECTOR.pod_keys(POD) == ["default/my-pod"]
    assert SCHEDULING_CONTEXT_SELECTOR.event_key(old, new) == want


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("other").claim_ref("x", "other-claim").obj(), id="names-another"),
        pytest.param(POD_TEMPLATE, id="claim-not-recorded"),
    ],
)
def test_pods_outside_the_claim_selector_get_skip(pod: Obj) -> None:
    """The selector's promise to the queue: a pod it does not key under the event is Skip."""
    assert CLAIM_SELECTOR.event_key(CLAIM, ALLOCATED) not in CLAIM_SELECTOR.pod_keys(pod)
    got = is_schedulable_after_claim_change(
        pod=pod, old=CLAIM, new=ALLOCATED, claims=StaticLister([ALLOCATED, OTHER_CLAIM])
    )
    assert got is SKIP
