"""Resource claim controller, pod event handling: podNeedsWork (spec/claim-controller.md §4.3)
with the deliberate differences recorded in docs/fidelity.md."""

from __future__ import annotations

import pytest

from draplane.api import meta
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.client.workqueue import RateLimitingQueue
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.resourceclaim_needs import pod_needs_work
from draplane.testing.apistate import wait_for
from draplane.testing.builders import (
    from_pod,
    make_claim,
    make_pod,
    make_scheduling_context,
)

from .conftest import (
    allocated_claim,
    claim_key,
    done_pod,
    generated_claim,
    other_pod,
    pod,
    pod_with_claim,
    running_user_pod,
    scheduled_pod,
    template,
    user_claim,
)


@pytest.mark.parametrize(
    ("objects", "needs_work"),
    [
        pytest.param((template, pod), True, id="template-pod-needs-claim"),
        pytest.param(
            (template, pod_with_claim, generated_claim),
            False,
            id="recorded-claim-needs-nothing",
        ),
        pytest.param(
            (template, done_pod, generated_claim),
            False,
            id="done-pod-releases-its-claims",
        ),
        pytest.param(
            (template, from_pod(pod).node("n").deletion_timestamp().obj()),
            False,
            id="deleting-pod-needs-nothing",
        ),
        pytest.param(
            (
                template,
                make_pod("my-pod")
                .claim_ref("u", "missing")
                .claim_template("acme", "my-template")
                .obj(),
            ),
            True,
            id="missing-user-claim-does-not-hide-later-claims",
        ),
        pytest.param(
            (
                template,
                from_pod(pod).claim_status("acme", None).claim_template("b", "my-template").obj(),
            ),
            True,
            id="claim-not-needed-does-not-hide-later-claims",
        ),
        pytest.param(
            (template, scheduled_pod, generated_claim),
            True,
            id="scheduled-pod-needs-scheduling-context",
        ),
        pytest.param(
            (
                template,
                scheduled_pod,
                generated_claim,
                make_scheduling_context(scheduled_pod).selected_node("worker").obj(),
            ),
            False,
            id="scheduled-pod-with-scheduling-context",
        ),
        pytest.param(
            (template, scheduled_pod, allocated_claim),
            True,
            id="allocated-claim-needs-reservation",
        ),
        pytest.param(
            (
                other_pod,
                from_pod(pod).claim_status("acme", "theirs").obj(),
                make_claim("theirs").owned_by_pod(other_pod).obj(),
            ),
            True,
            id="claim-owned-by-other-pod-is-reported",
        ),
        pytest.param((make_pod("plain").obj(),), False, id="pod-without-claims"),
    ],
)
async def test_pod_needs_work(
    objects: tuple[Obj, ...], needs_work: bool, seed, start_controller
) -> None:
    await seed(*objects)
    harness = await start_controller()
    ctx = harness.controller.ctx
    tested = [obj for obj in objects if obj["kind"] == "Pod"][-1]
    pod_now = ctx.pods.get(meta.name(tested), "default")
    assert pod_now is not None
    assert pod_needs_work(ctx, pod_now) is needs_work


async def drain(queue: RateLimitingQueue[ObjectKey]) -> set[ObjectKey]:
    keys: set[ObjectKey] = set()
    while len(queue):
        key = await queue.get()
        queue.done(key)
        keys.add(key)
    return keys


@pytest.mark.parametrize(
    ("tested", "objects", "keys"),
    [
        pytest.param(
            pod_with_claim,
            (generated_claim,),
            {claim_key("my-pod-acme-abcde")},
            id="finished-pod-releases-its-claim",
        ),
        pytest.param(
            from_pod(running_user_pod)
            .claim_template("acme", "my-template")
            .claim_status("acme", None)
            .obj(),
            (user_claim,),
            {claim_key("user-claim")},
            id="claim-not-needed-is-skipped",
        ),
    ],
)
async def test_finished_pod_queues_its_claims(
    tested: Obj, objects: tuple[Obj, ...], keys: set[ObjectKey], cluster, seed, start_controller
) -> None:
    """§4.3 release check: a finished pod queues `claim:` keys of the claims it names."""
    stored = await seed(template, tested, *objects)
    harness = await start_controller()
    queue = harness.controller.queue
    await drain(queue)
    [pod_now] = [obj for key, obj in stored.items() if key.startswith("Pod/")]
    finished = meta.deep_copy(await cluster.client().get(PODS, meta.name(pod_now), "default"))
    finished["status"]["phase"] = "Succeeded"
    await cluster.client().update(PODS, finished, subresource="status")

    await wait_for(lambda: len(queue), what="a queued key")
    assert await drain(queue) == keys
