"""DynamicResources at every extension point, against the real API (spec §4 cases).

Each case runs PreEnqueue, PreFilter, Filter per node, then PostFilter (no node fits) or
PreScore/Reserve/PreBind/PostBind (or Unreserve), and compares every returned Status and the
complete resulting lists of ResourceClaims and PodSchedulingContexts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from draplane.api.kinds import (
    NODES,
    POD_SCHEDULING_CONTEXTS,
    PODS,
    RESOURCE_CLAIMS,
    RESOURCE_CLASSES,
)
from draplane.api.meta import Obj, deep_copy
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    Status,
)
from draplane.scheduler.plugins.dynamicresources import DynamicResources
from draplane.testing.apiobjects import ObjectSeeder, normalize_expected
from draplane.testing.builders import (
    from_claim,
    from_pod,
    from_scheduling_context,
    make_claim,
    make_class,
    make_node,
    make_pod,
    make_scheduling_context,
)
from draplane.testing.cluster import Cluster

CLASS_NAME = "my-resource-class"
CLAIM_NAME = "my-pod-my-resource"
WORKER = make_node("worker").label("nodename", "worker").obj()
WORKER_2 = make_node("worker-2").label("nodename", "worker-2").obj()
RESOURCE_CLASS = make_class(CLASS_NAME).obj()

POD_WITH_CLAIM_NAME = make_pod("my-pod").claim_ref("my-resource", CLAIM_NAME).obj()
POD_WITH_CLAIM_TEMPLATE = (
    make_pod("my-pod").uid("pod-uid").claim_template("my-resource", "my-template").obj()
)
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = (
    from_pod(POD_WITH_CLAIM_TEMPLATE).claim_status("my-resource", CLAIM_NAME).obj()
)
POD_WITH_NO_CLAIM_NEEDED = from_pod(POD_WITH_CLAIM_TEMPLATE).claim_status("my-resource", None).obj()
POD_WITH_TWO_CLAIM_NAMES = (
    from_pod(POD_WITH_CLAIM_NAME).claim_ref("my-resource-2", CLAIM_NAME + "-2").obj()
)
OTHER_POD = make_pod("other-pod").obj()

CLAIM = make_claim(CLAIM_NAME).resource_class(CLASS_NAME).obj()
PENDING_IMMEDIATE_CLAIM = from_claim(CLAIM).allocation_mode("Immediate").obj()
PENDING_DELAYED_CLAIM = CLAIM
PENDING_DELAYED_CLAIM_2 = from_claim(CLAIM).name(CLAIM_NAME + "-2").uid("claim-2-uid").obj()
DEALLOCATING_CLAIM = from_claim(PENDING_IMMEDIATE_CLAIM).allocation().deallocation_requested().obj()
ALLOCATED_CLAIM = from_claim(CLAIM).allocation().obj()
IN_USE_CLAIM = from_claim(ALLOCATED_CLAIM).reserved_for(POD_WITH_CLAIM_NAME).obj()
IN_USE_BY_OTHER_CLAIM = from_claim(ALLOCATED_CLAIM).reserved_for(OTHER_POD).obj()
OWNED_CLAIM = from_claim(ALLOCATED_CLAIM).owned_by_pod(POD_WITH_CLAIM_TEMPLATE).obj()
NOT_OWNED_CLAIM = from_claim(ALLOCATED_CLAIM).owned_by_pod(OTHER_POD).obj()
DELETED_CLAIM = from_claim(CLAIM).finalizer("test.example.com/keep").deletion_timestamp().obj()
WRONG_TOPOLOGY_DELAYED = (
    make_claim(CLAIM_NAME).resource_class(CLASS_NAME).allocation(node="other").obj()
)
WRONG_TOPOLOGY_IMMEDIATE = from_claim(WRONG_TOPOLOGY_DELAYED).allocation_mode("Immediate").obj()
GOOD_TOPOLOGY = make_claim(CLAIM_NAME).resource_class(CLASS_NAME).allocation(node="worker").obj()
OTHER_CLAIM = make_claim("not-my-claim").resource_class(CLASS_NAME).obj()
WRONG_TOPOLOGY_DELAYED_2 = (
    from_claim(WRONG_TOPOLOGY_DELAYED).name(CLAIM_NAME + "-2").uid("claim-2-uid").obj()
)
WRONG_TOPOLOGY_IMMEDIATE_2 = (
    from_claim(WRONG_TOPOLOGY_IMMEDIATE).name(CLAIM_NAME + "-2").uid("claim-2-uid").obj()
)
SHARED_WRONG_TOPOLOGY = (
    make_claim(CLAIM_NAME)
    .resource_class(CLASS_NAME)
    .allocation(node="other", shareable=True)
    .reserved_for(POD_WITH_CLAIM_NAME, OTHER_POD)
    .obj()
)
UNRESTRICTED_CLAIM = make_claim(CLAIM_NAME).resource_class(CLASS_NAME).allocation().obj()
UNRESTRICTED_CLAIM_2 = (
    from_claim(UNRESTRICTED_CLAIM).name(CLAIM_NAME + "-2").uid("claim-2-uid").obj()
)
# A "no claim needed" pod claim first: positions in the plugin's claim list and in
# pod.spec.resourceClaims differ (the positional [QUIRK] of spec §4.8/§4.11 is not copied).
POD_SKIPPED_CLAIM_FIRST = (
    make_pod("my-pod")
    .uid(POD_WITH_CLAIM_NAME["metadata"]["uid"])
    .claim_template("skipped", "my-template")
    .claim_ref("my-resource", CLAIM_NAME)
    .claim_ref("my-resource-2", CLAIM_NAME + "-2")
    .claim_status("skipped", None)
    .obj()
)


def reserved(claim: Obj, *pods: Obj) -> Obj:
    return from_claim(claim).reserved_for(*pods).obj()


def deallocation_requested(claim: Obj) -> Obj:
    out = from_claim(claim).deallocation_requested().obj()
    out["status"].pop("reservedFor", None)
    return out


SCHEDULING = make_scheduling_context(POD_WITH_CLAIM_NAME).obj()
SCHEDULING_POTENTIAL = from_scheduling_context(SCHEDULING).potential_nodes("worker").obj()
SCHEDULING_SELECTED_POTENTIAL = (
    from_scheduling_context(SCHEDULING_POTENTIAL).selected_node("worker").obj()
)
SCHEDULING_INFO = (
    from_scheduling_context(SCHEDULING_POTENTIAL)
    .unsuitable_nodes("my-resource")
    .unsuitable_nodes("my-resource-2")
    .obj()
)
SCHEDULING_INFO_SELECTED = from_scheduling_context(SCHEDULING_INFO).selected_node("worker").obj()
SCHEDULING_UNSUITABLE = (
    from_scheduling_context(SCHEDULING_POTENTIAL).unsuitable_nodes("my-resource", "worker").obj()
)
SCHEDULING_PARTIAL_INFO = (
    from_scheduling_context(SCHEDULING_POTENTIAL).unsuitable_nodes("my-resource").obj()
)
SCHEDULING_BOTH_NODES = (
    from_scheduling_context(SCHEDULING).potential_nodes("worker", "worker-2").obj()
)
SCHEDULING_NOT_OWNED = from_scheduling_context(SCHEDULING).obj()
SCHEDULING_NOT_OWNED["metadata"]["ownerReferences"][0]["uid"] = OTHER_POD["metadata"]["uid"]

Prepare = Callable[[Client, ObjectSeeder], Awaitable[None]]


async def label_scheduling_context(client: Client, seeder: ObjectSeeder) -> None:
    """A concurrent writer touches the PodSchedulingContext before Reserve (stale cache)."""
    psc = deep_copy(await client.get(POD_SCHEDULING_CONTEXTS, "my-pod", "default"))
    psc["metadata"].setdefault("labels", {})["foo"] = "bar"
    await client.update(POD_SCHEDULING_CONTEXTS, psc)


async def label_claim(client: Client, seeder: ObjectSeeder) -> None:
    """A concurrent writer touches the claim after PreFilter read it (stale snapshot)."""
    claim = deep_copy(await client.get(RESOURCE_CLAIMS, CLAIM_NAME, "default"))
    claim["metadata"].setdefault("labels", {})["foo"] = "bar"
    await client.update(RESOURCE_CLAIMS, claim)


CONFLICT = (
    'Operation cannot be fulfilled on {resource}.resource.k8s.io "{name}": the object has '
    "been modified; please apply your changes to the latest version and try again"
)


@dataclass(frozen=True)
class Want:
    pre_enqueue: Status = SUCCESS
    pre_filter: Status = SUCCESS
    filter: dict[str, Status] = field(default_factory=dict)
    post_filter: Status | None = None
    reserve: Status = SUCCESS
    pre_bind: Status = SUCCESS
    """PreBind's status, when Reserve succeeded."""
    claims: tuple[Obj, ...] | None = None
    """Every ResourceClaim afterwards; None: unchanged."""
    contexts: tuple[Obj, ...] | None = None
    """Every PodSchedulingContext afterwards; None: unchanged."""


@dataclass(frozen=True)
class Case:
    pod: Obj
    want: Want
    claims: tuple[Obj, ...] = ()
    classes: tuple[Obj, ...] = (RESOURCE_CLASS,)
    contexts: tuple[Obj, ...] = ()
    nodes: tuple[Obj, ...] = (WORKER,)
    other_pods: tuple[Obj, ...] = ()
    prepare_reserve: Prepare | None = None
    prepare_post_filter: Prepare | None = None
    unreserve_after_reserve: bool = False
    """Simulate a failure after PreBind (e.g. in Bind): Unreserve instead of PostBind."""
    fail_before_pre_bind: bool = False
    """Simulate a failure between Reserve and PreBind (e.g. in Permit): Unreserve instead."""
    pre_enqueue_off: bool = False
    """Start at PreFilter, as the scheduler does with --pre-enqueue off."""


def UAU(msg: str) -> Status:
    return Status.unresolvable(msg)


CASES = [
    pytest.param(
        Case(
            pod=make_pod("my-pod").obj(),
            want=Want(pre_filter=SKIP),
        ),
        id="empty",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(ALLOCATED_CLAIM, OTHER_CLAIM),
            want=Want(claims=(reserved(ALLOCATED_CLAIM, POD_WITH_CLAIM_NAME), OTHER_CLAIM)),
        ),
        id="claim-reference",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            claims=(OWNED_CLAIM, OTHER_CLAIM),
            want=Want(claims=(reserved(OWNED_CLAIM, POD_WITH_CLAIM_TEMPLATE), OTHER_CLAIM)),
        ),
        id="claim-template",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            want=Want(pre_enqueue=UAU(f'resourceclaim.resource.k8s.io "{CLAIM_NAME}" not found')),
        ),
        id="missing-claim",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_TEMPLATE,
            want=Want(pre_enqueue=UAU('pod "default/my-pod": ResourceClaim not created yet')),
        ),
        id="template-claim-not-created",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(DELETED_CLAIM,),
            want=Want(pre_enqueue=UAU(f'resourceclaim "{CLAIM_NAME}" is being deleted')),
        ),
        id="deleted-claim",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            claims=(NOT_OWNED_CLAIM,),
            other_pods=(OTHER_POD,),
            want=Want(
                pre_enqueue=UAU(
                    f"ResourceClaim default/{CLAIM_NAME} was not created for pod default/my-pod "
                    "(pod is not owner)"
                )
            ),
        ),
        id="wrong-claim",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_NO_CLAIM_NEEDED,
            want=Want(pre_filter=SKIP),
        ),
        id="no-claim-needed",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_IMMEDIATE_CLAIM,),
            want=Want(
                pre_filter=UAU("unallocated immediate resourceclaim"),
                post_filter=Status.unschedulable("no new claims to deallocate"),
            ),
        ),
        id="waiting-for-immediate-allocation",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(DEALLOCATING_CLAIM,),
            want=Want(
                pre_filter=UAU("resourceclaim must be reallocated"),
                post_filter=Status.unschedulable("no new claims to deallocate"),
            ),
        ),
        id="waiting-for-deallocation",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            classes=(),
            want=Want(
                filter={
                    "worker": Status.error(
                        f'look up resource class: resourceclass.resource.k8s.io "{CLASS_NAME}" '
                        "not found"
                    )
                },
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="delayed-allocation-missing-class",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            want=Want(
                pre_bind=UAU("waiting for resource driver to allocate resource"),
                contexts=(SCHEDULING_SELECTED_POTENTIAL,),
            ),
        ),
        id="delayed-allocation-scheduling-select-immediately",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(PENDING_DELAYED_CLAIM, PENDING_DELAYED_CLAIM_2),
            want=Want(
                reserve=UAU("waiting for resource driver to provide information"),
                contexts=(SCHEDULING_POTENTIAL,),
            ),
        ),
        id="delayed-allocation-scheduling-ask",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(PENDING_DELAYED_CLAIM, PENDING_DELAYED_CLAIM_2),
            contexts=(SCHEDULING_INFO,),
            want=Want(
                pre_bind=UAU("waiting for resource driver to allocate resource"),
                contexts=(SCHEDULING_INFO_SELECTED,),
            ),
        ),
        id="delayed-allocation-scheduling-finish",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            contexts=(SCHEDULING_SELECTED_POTENTIAL,),
            want=Want(reserve=UAU("waiting for resource driver to allocate resource")),
        ),
        id="delayed-allocation-already-selected-waits-without-writing",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            contexts=(from_scheduling_context(SCHEDULING).selected_node("worker").obj(),),
            want=Want(
                reserve=UAU("waiting for resource driver to allocate resource"),
                contexts=(SCHEDULING_SELECTED_POTENTIAL,),
            ),
        ),
        id="delayed-allocation-already-selected-publishes-potential-nodes",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            fail_before_pre_bind=True,
            want=Want(contexts=(SCHEDULING_SELECTED_POTENTIAL,)),
        ),
        id="failure-before-prebind-unreserve-publishes-the-selection",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(PENDING_DELAYED_CLAIM, PENDING_DELAYED_CLAIM_2),
            contexts=(SCHEDULING_INFO,),
            prepare_reserve=label_scheduling_context,
            fail_before_pre_bind=True,
            want=Want(
                contexts=(from_scheduling_context(SCHEDULING_INFO).label("foo", "bar").obj(),),
            ),
        ),
        id="failure-before-prebind-publish-conflict-only-logged",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(PENDING_DELAYED_CLAIM, PENDING_DELAYED_CLAIM_2),
            contexts=(SCHEDULING_INFO,),
            prepare_reserve=label_scheduling_context,
            want=Want(
                pre_bind=Status.error(
                    "Operation cannot be fulfilled on podschedulingcontexts.resource.k8s.io "
                    '"my-pod": the object has been modified; please apply your changes to the '
                    "latest version and try again"
                ),
                contexts=(from_scheduling_context(SCHEDULING_INFO).label("foo", "bar").obj(),),
            ),
        ),
        id="delayed-allocation-scheduling-finish-concurrent-label-update",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(ALLOCATED_CLAIM,),
            contexts=(SCHEDULING_INFO,),
            want=Want(claims=(reserved(ALLOCATED_CLAIM, POD_WITH_CLAIM_NAME),), contexts=()),
        ),
        id="delayed-allocation-scheduling-completed",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(ALLOCATED_CLAIM, PENDING_DELAYED_CLAIM_2),
            want=Want(
                pre_bind=UAU("waiting for resource driver to allocate resource"),
                contexts=(SCHEDULING_SELECTED_POTENTIAL,),
            ),
        ),
        id="allocated-claim-not-reserved-while-another-is-pending",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(IN_USE_BY_OTHER_CLAIM,),
            other_pods=(OTHER_POD,),
            want=Want(
                pre_filter=UAU("resourceclaim in use"),
                post_filter=Status.unschedulable("no new claims to deallocate"),
            ),
        ),
        id="in-use-by-other",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(reserved(WRONG_TOPOLOGY_DELAYED, POD_WITH_CLAIM_NAME), OTHER_CLAIM),
            want=Want(
                filter={"worker": UAU("resourceclaim not available on the node")},
                post_filter=SUCCESS,
                claims=(deallocation_requested(WRONG_TOPOLOGY_DELAYED), OTHER_CLAIM),
            ),
        ),
        id="wrong-topology-delayed-allocation",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(WRONG_TOPOLOGY_IMMEDIATE,),
            want=Want(
                filter={"worker": UAU("resourceclaim not available on the node")},
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="wrong-topology-immediate-allocation",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(GOOD_TOPOLOGY,),
            want=Want(claims=(reserved(GOOD_TOPOLOGY, POD_WITH_CLAIM_NAME),)),
        ),
        id="good-topology",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(GOOD_TOPOLOGY,),
            unreserve_after_reserve=True,
            want=Want(claims=(GOOD_TOPOLOGY,)),
        ),
        id="bind-failure",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(IN_USE_CLAIM,),
            want=Want(),
        ),
        id="reserved-okay",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            contexts=(SCHEDULING_UNSUITABLE,),
            want=Want(
                filter={
                    "worker": UAU("resourceclaim cannot be allocated for the node (unsuitable)")
                },
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="unsuitable-node",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            classes=(make_class(CLASS_NAME).suitable_nodes("worker-2").obj(),),
            want=Want(
                filter={"worker": UAU("excluded by resource class node filter")},
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="class-suitable-nodes-exclude",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            contexts=(SCHEDULING_NOT_OWNED,),
            other_pods=(OTHER_POD,),
            want=Want(
                filter={
                    "worker": Status.error(
                        "PodSchedulingContext object with UID {psc_uid} is not owned by Pod "
                        "default/my-pod"
                    )
                },
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="scheduling-context-not-owned",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(PENDING_DELAYED_CLAIM,),
            nodes=(WORKER_2, WORKER),
            want=Want(
                pre_bind=UAU("waiting for resource driver to allocate resource"),
                contexts=(
                    from_scheduling_context(SCHEDULING)
                    .potential_nodes("worker", "worker-2")
                    .selected_node("worker-2")
                    .obj(),
                ),
            ),
        ),
        id="prescore-sets-potential-nodes",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(UNRESTRICTED_CLAIM,),
            nodes=(WORKER, WORKER_2),
            want=Want(claims=(reserved(UNRESTRICTED_CLAIM, POD_WITH_CLAIM_NAME),)),
        ),
        id="prescore-nothing-pending",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(PENDING_DELAYED_CLAIM, PENDING_DELAYED_CLAIM_2),
            contexts=(SCHEDULING_BOTH_NODES,),
            nodes=(WORKER, WORKER_2),
            want=Want(reserve=UAU("waiting for resource driver to provide information")),
        ),
        id="prescore-potential-nodes-already-listed",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(PENDING_DELAYED_CLAIM, PENDING_DELAYED_CLAIM_2),
            contexts=(SCHEDULING_PARTIAL_INFO,),
            want=Want(reserve=UAU("waiting for resource driver to provide information")),
        ),
        id="delayed-allocation-scheduling-ask-again-unchanged",
    ),
    pytest.param(
        Case(
            pod=POD_SKIPPED_CLAIM_FIRST,
            claims=(PENDING_DELAYED_CLAIM, PENDING_DELAYED_CLAIM_2),
            contexts=(SCHEDULING_INFO,),
            want=Want(
                pre_bind=UAU("waiting for resource driver to allocate resource"),
                contexts=(SCHEDULING_INFO_SELECTED,),
            ),
        ),
        id="reserve-finds-driver-info-by-pod-claim-name",
    ),
    pytest.param(
        Case(
            pod=POD_SKIPPED_CLAIM_FIRST,
            claims=(
                PENDING_DELAYED_CLAIM,
                reserved(UNRESTRICTED_CLAIM_2, POD_WITH_CLAIM_NAME),
            ),
            contexts=(SCHEDULING_UNSUITABLE,),
            want=Want(
                filter={
                    "worker": UAU("resourceclaim cannot be allocated for the node (unsuitable)")
                },
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="filter-finds-unsuitable-nodes-by-pod-claim-name",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(IN_USE_CLAIM,),
            unreserve_after_reserve=True,
            want=Want(claims=(ALLOCATED_CLAIM,)),
        ),
        id="bind-failure-undoes-earlier-reservation",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(IN_USE_CLAIM, PENDING_DELAYED_CLAIM_2),
            want=Want(
                pre_bind=UAU("waiting for resource driver to allocate resource"),
                claims=(ALLOCATED_CLAIM, PENDING_DELAYED_CLAIM_2),
                contexts=(SCHEDULING_SELECTED_POTENTIAL,),
            ),
        ),
        id="unreserve-after-waiting-undoes-earlier-reservation",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(GOOD_TOPOLOGY,),
            prepare_reserve=label_claim,
            want=Want(
                pre_bind=Status.error(CONFLICT.format(resource="resourceclaims", name=CLAIM_NAME)),
                claims=(from_claim(GOOD_TOPOLOGY).label("foo", "bar").obj(),),
            ),
        ),
        id="reservation-conflict",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(reserved(WRONG_TOPOLOGY_DELAYED, POD_WITH_CLAIM_NAME),),
            prepare_post_filter=label_claim,
            want=Want(
                filter={"worker": UAU("resourceclaim not available on the node")},
                post_filter=Status.error(
                    CONFLICT.format(resource="resourceclaims", name=CLAIM_NAME)
                ),
                claims=(
                    from_claim(reserved(WRONG_TOPOLOGY_DELAYED, POD_WITH_CLAIM_NAME))
                    .label("foo", "bar")
                    .obj(),
                ),
            ),
        ),
        id="postfilter-conflict",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(SHARED_WRONG_TOPOLOGY,),
            other_pods=(OTHER_POD,),
            want=Want(
                filter={"worker": UAU("resourceclaim not available on the node")},
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="postfilter-keeps-claim-used-by-other-pod",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(
                WRONG_TOPOLOGY_IMMEDIATE,
                reserved(WRONG_TOPOLOGY_DELAYED_2, POD_WITH_CLAIM_NAME),
            ),
            want=Want(
                filter={"worker": UAU("resourceclaim not available on the node")},
                post_filter=SUCCESS,
                claims=(WRONG_TOPOLOGY_IMMEDIATE, deallocation_requested(WRONG_TOPOLOGY_DELAYED_2)),
            ),
        ),
        id="postfilter-deallocates-only-the-delayed-claim",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_TWO_CLAIM_NAMES,
            claims=(GOOD_TOPOLOGY, WRONG_TOPOLOGY_IMMEDIATE_2),
            want=Want(
                filter={"worker": UAU("resourceclaim not available on the node")},
                post_filter=Status.unschedulable("still not schedulable"),
            ),
        ),
        id="postfilter-never-deallocates-an-immediate-claim",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            pre_enqueue_off=True,
            want=Want(
                pre_filter=UAU(f'resourceclaim.resource.k8s.io "{CLAIM_NAME}" not found'),
                post_filter=Status.unschedulable("no new claims to deallocate"),
            ),
        ),
        id="prefilter-missing-claim",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_TEMPLATE,
            pre_enqueue_off=True,
            want=Want(
                pre_filter=UAU('pod "default/my-pod": ResourceClaim not created yet'),
                post_filter=Status.unschedulable("no new claims to deallocate"),
            ),
        ),
        id="prefilter-template-claim-not-created",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_NAME,
            claims=(DELETED_CLAIM,),
            pre_enqueue_off=True,
            want=Want(
                pre_filter=UAU(f'resourceclaim "{CLAIM_NAME}" is being deleted'),
                post_filter=Status.unschedulable("no new claims to deallocate"),
            ),
        ),
        id="prefilter-deleted-claim",
    ),
    pytest.param(
        Case(
            pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
            claims=(NOT_OWNED_CLAIM,),
            other_pods=(OTHER_POD,),
            pre_enqueue_off=True,
            want=Want(
                pre_filter=UAU(
                    f"ResourceClaim default/{CLAIM_NAME} was not created for pod default/my-pod "
                    "(pod is not owner)"
                ),
                post_filter=Status.unschedulable("no new claims to deallocate"),
            ),
        ),
        id="prefilter-wrong-claim",
    ),
]


async def seed(cluster: Cluster, case: Case) -> tuple[ObjectSeeder, Obj, InformerFactory]:
    client = cluster.client()
    seeder = ObjectSeeder(client)
    pod = await seeder.create(PODS, case.pod)
    for other in case.other_pods:
        await seeder.create(PODS, other)
    for rt, objs in (
        (NODES, case.nodes),
        (RESOURCE_CLASSES, case.classes),
        (RESOURCE_CLAIMS, case.claims),
        (POD_SCHEDULING_CONTEXTS, case.contexts),
    ):
        for obj in objs:
            await seeder.create(rt, obj)
    informers = InformerFactory(client)
    for rt in (RESOURCE_CLAIMS, RESOURCE_CLASSES, POD_SCHEDULING_CONTEXTS):
        informers.informer(rt)
    await informers.start()
    await informers.wait_synced()
    if status_entries := (case.pod.get("status") or {}).get("resourceClaimStatuses"):
        pod["status"]["resourceClaimStatuses"] = status_entries
    return seeder, pod, informers


async def run_plugin(
    plugin: DynamicResources, case: Case, pod: Obj, client: Client, seeder: ObjectSeeder
) -> dict[str, Status | None]:
    got: dict[str, Status | None] = {}
    if not case.pre_enqueue_off:
        pre_enqueue = got["pre_enqueue"] = plugin.pre_enqueue(pod)
        if not pre_enqueue.is_success:
            return got
    state, pod_info = CycleState(), PodInfo(pod)
    pre_filter = got["pre_filter"] = plugin.pre_filter(state, pod_info)
    feasible: list[NodeInfo] = []
    if not pre_filter.is_rejected:
        for node in case.nodes:
            info = NodeInfo(node)
            status = SUCCESS if pre_filter.is_skip else plugin.filter(state, pod_info, info)
            got[f"filter/{info.name}"] = status
            if status.is_success:
                feasible.append(info)
    if not feasible:
        if case.prepare_post_filter is not None:
            await case.prepare_post_filter(client, seeder)
        got["post_filter"] = await plugin.post_filter(state, pod_info, {})
        return got
    if len(feasible) > 1:
        got["pre_score"] = plugin.pre_score(state, pod_info, feasible)
    if case.prepare_reserve is not None:
        await case.prepare_reserve(client, seeder)
    node_name = feasible[0].name
    status = got["reserve"] = await plugin.reserve(state, pod_info, node_name)
    if status.is_success and not case.fail_before_pre_bind:
        status = got["pre_bind"] = await plugin.pre_bind(state, pod_info, node_name)
    if not status.is_success or case.unreserve_after_reserve or case.fail_before_pre_bind:
        await plugin.unreserve(state, pod_info, node_name)
    else:
        await plugin.post_bind(state, pod_info, node_name)
    return got


def expected_statuses(case: Case, got: dict[str, Status | None], psc_uid: str) -> dict:
    want = case.want
    expected: dict[str, Status | None] = {}
    if not case.pre_enqueue_off:
        expected["pre_enqueue"] = want.pre_enqueue
        if not want.pre_enqueue.is_success:
            return expected
    expected["pre_filter"] = want.pre_filter
    for key in got:
        if key.startswith("filter/"):
            status = want.filter.get(key.removeprefix("filter/"), SUCCESS)
            expected[key] = Status(
                status.code, tuple(r.replace("{psc_uid}", psc_uid) for r in status.reasons)
            )
    if want.post_filter is not None:
        expected["post_filter"] = want.post_filter
    else:
        if "pre_score" in got:
            expected["pre_score"] = SUCCESS
        expected["reserve"] = want.reserve
        if want.reserve.is_success and not case.fail_before_pre_bind:
            expected["pre_bind"] = want.pre_bind
    return expected


@pytest.mark.parametrize("case", CASES)
async def test_plugin(cluster: Cluster, case: Case) -> None:
    seeder, pod, informers = await seed(cluster, case)
    client = cluster.client()
    seeded = await versions(client)
    try:
        handle = Handle(
            client,
            {
                rt: informers.informer(rt).lister
                for rt in (RESOURCE_CLAIMS, RESOURCE_CLASSES, POD_SCHEDULING_CONTEXTS)
            },
        )
        plugin = DynamicResources(handle)
        got = await run_plugin(plugin, case, pod, client, seeder)
    finally:
        await informers.stop()

    psc_uid = next(iter(seeder.to_server.get(c["metadata"]["uid"], "") for c in case.contexts), "")
    assert got == expected_statuses(case, got, psc_uid)

    claims = (await client.list(RESOURCE_CLAIMS, "default"))["items"]
    contexts = (await client.list(POD_SCHEDULING_CONTEXTS, "default"))["items"]
    want_claims = case.claims if case.want.claims is None else case.want.claims
    want_contexts = case.contexts if case.want.contexts is None else case.want.contexts
    assert sorted((seeder.normalize(c) for c in claims), key=_name) == sorted(
        (normalize_expected(c) for c in want_claims), key=_name
    )
    assert [seeder.normalize(c) for c in contexts] == [normalize_expected(c) for c in want_contexts]
    # "Unchanged" means not written at all (no needless writes, no conflicts with drivers),
    # unless a prepare step wrote on purpose.
    if case.prepare_reserve is None and case.prepare_post_filter is None:
        after = await versions(client)
        for rt, unchanged in (
            (RESOURCE_CLAIMS, case.want.claims),
            (POD_SCHEDULING_CONTEXTS, case.want.contexts),
        ):
            if unchanged is None:
                assert after[rt.resource] == seeded[rt.resource]


async def versions(client: Client) -> dict[str, dict[str, str]]:
    """resourceVersion of every claim and PodSchedulingContext, by resource and name."""
    out: dict[str, dict[str, str]] = {}
    for rt in (RESOURCE_CLAIMS, POD_SCHEDULING_CONTEXTS):
        items = (await client.list(rt, "default"))["items"]
        out[rt.resource] = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in items}
    return out


def _name(obj: Obj) -> str:
    return str(obj["metadata"]["name"])
