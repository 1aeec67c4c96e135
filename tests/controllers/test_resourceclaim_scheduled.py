"""Resource claim controller, help for pods bound before their claims were allocated
(spec/claim-controller.md §5 step 6, §5.5 ensurePodSchedulingContext, §5.6 reserveForPod)."""

from __future__ import annotations

import pytest

from draplane.api import meta
from draplane.api.kinds import POD_SCHEDULING_CONTEXTS
from draplane.testing.builders import (
    from_claim,
    from_pod,
    make_pod,
    make_scheduling_context,
)

from .conftest import (
    GENERATED,
    OWNED,
    Case,
    allocated_claim,
    generated_claim,
    other_pod,
    pod,
    pod_key,
    run_case,
    scheduled_pod,
    template,
    user_claim,
    view,
)

SCHEDULED_POD_CASES = [
    pytest.param(
        Case(
            objects=(template, scheduled_pod, generated_claim),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
            scheduling_contexts={"my-pod": "worker"},
        ),
        id="trigger-allocation",
    ),
    pytest.param(
        Case(
            objects=(template, from_pod(pod).node("worker").obj()),
            key=pod_key(),
            claims={GENERATED: OWNED},
            statuses={"my-pod": [("acme", GENERATED)]},
            scheduling_contexts={"my-pod": "worker"},
            attempts=1,
        ),
        id="create-and-trigger-allocation-in-one-pass",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                scheduled_pod,
                generated_claim,
                make_scheduling_context(scheduled_pod).selected_node("elsewhere").obj(),
            ),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
            scheduling_contexts={"my-pod": "worker"},
        ),
        id="update-selected-node",
    ),
    pytest.param(
        Case(
            objects=(template, scheduled_pod, allocated_claim),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED | {"reservedFor": ["my-pod"]}},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="add-reserved",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                other_pod,
                scheduled_pod,
                from_claim(allocated_claim).reserved_for(other_pod).obj(),
            ),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED | {"reservedFor": ["other-pod"]}},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")], "other-pod": []},
        ),
        id="reserved-by-other-pod-is-left-alone",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                other_pod,
                scheduled_pod,
                from_claim(generated_claim)
                .allocation(shareable=True)
                .reserved_for(other_pod)
                .obj(),
            ),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED | {"reservedFor": ["other-pod", "my-pod"]}},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")], "other-pod": []},
        ),
        id="add-reserved-shareable",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                scheduled_pod,
                from_claim(generated_claim).allocation_mode("Immediate").obj(),
            ),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="immediate-unallocated-needs-nothing",
    ),
    pytest.param(
        Case(
            objects=(template, from_pod(pod).node("worker").claim_status("acme", None).obj()),
            key=pod_key(),
            claims={},
            statuses={"my-pod": [("acme", None)]},
        ),
        id="scheduled-pod-claim-not-needed",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                make_pod("my-pod")
                .uid(pod["metadata"]["uid"])
                .claim_ref("user", "missing")
                .claim_template("acme", "my-template")
                .claim_status("acme", "my-pod-acme-abcde")
                .node("worker")
                .obj(),
                generated_claim,
            ),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="scheduled-pass-stops-at-missing-claim",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                from_pod(scheduled_pod).claim_ref("user", "user-claim").obj(),
                generated_claim,
                from_claim(user_claim).allocation().obj(),
            ),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED, "user-claim": view()},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
            scheduling_contexts={"my-pod": "worker"},
        ),
        id="scheduled-pass-returns-after-scheduling-context",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                scheduled_pod,
                from_claim(allocated_claim).deallocation_requested().obj(),
            ),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED | {"dealloc": True}},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
            error="reserve claim for pod:",
        ),
        id="reserve-rejected-while-deallocation-requested",
    ),
]


@pytest.mark.parametrize("case", SCHEDULED_POD_CASES)
async def test_sync_scheduled_pod(case: Case, cluster, seed, start_controller) -> None:
    await run_case(case, cluster=cluster, seed=seed, start_controller=start_controller)


async def test_scheduling_context_for_a_bound_pod(cluster, seed, start_controller) -> None:
    """§5.5: only `spec.selectedNode`, the pod as controller owner, nothing else."""
    stored = await seed(template, scheduled_pod, generated_claim)
    harness = await start_controller()
    await harness.controller.sync(pod_key())
    created = await cluster.client().get(POD_SCHEDULING_CONTEXTS, "my-pod", "default")
    assert meta.owner_references(created) == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "my-pod",
            "uid": meta.uid(stored["Pod/default/my-pod"]),
            "controller": True,
        }
    ]
    assert created["spec"] == {"selectedNode": "worker"}
    assert not (created.get("status") or {}).get("resourceClaims")
