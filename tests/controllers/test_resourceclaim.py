"""Resource claim controller, pod side: syncPod (one table row per branch of
spec/claim-controller.md §5, §5.1-§5.6) and podNeedsWork (§4.3), against the real registry
through `sync(key)`."""

from __future__ import annotations

import asyncio

import pytest

from draplane.api import meta
from draplane.api.errors import StatusError
from draplane.api.kinds import (
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
)
from draplane.client.interface import Client
from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.dra.claims import ANNOTATION_POD_CLAIM_NAME
from draplane.testing.apistate import wait_for
from draplane.testing.builders import (
    from_pod,
    make_claim,
)

from .conftest import (
    GENERATED,
    KEEP,
    OWNED,
    Case,
    claim_views,
    generated_claim,
    other_pod,
    pod,
    pod_key,
    pod_with_claim,
    run_case,
    running_user_pod,
    template,
    user_claim,
    view,
    warning_events,
)

POD_SYNC_CASES = [
    pytest.param(
        Case(
            objects=(template, pod),
            key=pod_key(),
            claims={GENERATED: OWNED},
            statuses={"my-pod": [("acme", GENERATED)]},
            attempts=1,
        ),
        id="create",
    ),
    pytest.param(
        Case(
            objects=(template, pod_with_claim, generated_claim),
            key=pod_key(),
            claims={"my-pod-acme-abcde": OWNED},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="nop",
    ),
    pytest.param(
        Case(
            objects=(template, pod_with_claim),
            key=pod_key(),
            claims={GENERATED: OWNED},
            statuses={"my-pod": [("acme", GENERATED)]},
            attempts=1,
        ),
        id="recreate",
    ),
    pytest.param(
        Case(
            objects=(pod,),
            key=pod_key(),
            claims={},
            statuses={"my-pod": []},
            error='resource claim template "my-template"',
            events=(
                "Pod/my-pod FailedResourceClaimCreation: PodResourceClaim acme: resource claim "
                "template "
                '"my-template": resourceclaimtemplates.resource.k8s.io "my-template" not found',
            ),
        ),
        id="missing-template",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                pod,
                make_claim("found")
                .owned_by_pod(pod)
                .annotation(ANNOTATION_POD_CLAIM_NAME, "acme")
                .obj(),
            ),
            key=pod_key(),
            claims={"found": OWNED},
            statuses={"my-pod": [("acme", "found")]},
        ),
        id="find-existing-claim-by-annotation",
    ),
    pytest.param(
        Case(
            objects=(template, pod, make_claim("my-pod-acme").owned_by_pod(pod).obj()),
            key=pod_key(),
            claims={"my-pod-acme": view(owner="my-pod")},
            statuses={"my-pod": [("acme", "my-pod-acme")]},
        ),
        id="find-legacy-name",
    ),
    pytest.param(
        Case(
            objects=(template, pod, make_claim("my-pod-acme").obj()),
            key=pod_key(),
            claims={"my-pod-acme": view(), GENERATED: OWNED},
            statuses={"my-pod": [("acme", GENERATED)]},
            attempts=1,
        ),
        id="legacy-name-not-owned-is-left-alone",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                pod,
                make_claim("for-other")
                .owned_by_pod(pod)
                .annotation(ANNOTATION_POD_CLAIM_NAME, "other")
                .obj(),
            ),
            key=pod_key(),
            claims={"for-other": view(owner="my-pod", pod_claim="other"), GENERATED: OWNED},
            statuses={"my-pod": [("acme", GENERATED)]},
            attempts=1,
        ),
        id="claim-for-other-pod-claim-is-skipped",
    ),
    pytest.param(Case(objects=(template,), key=pod_key(), claims={}), id="no-such-pod"),
    pytest.param(
        Case(
            objects=(
                template,
                from_pod(pod).node("worker").deletion_timestamp().obj(),
            ),
            key=pod_key(),
            claims={},
            statuses={"my-pod": []},
        ),
        id="pod-deleting",
    ),
    pytest.param(
        Case(
            objects=(template, from_pod(pod).phase("Succeeded").obj()),
            key=pod_key(),
            claims={},
            statuses={"my-pod": []},
        ),
        id="no-work-for-done-pod",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                other_pod,
                from_pod(pod).claim_status("acme", "theirs").obj(),
                make_claim("theirs")
                .owned_by_pod(other_pod)
                .annotation(ANNOTATION_POD_CLAIM_NAME, "acme")
                .obj(),
            ),
            key=pod_key(),
            claims={"theirs": view(owner="other-pod", pod_claim="acme")},
            statuses={"my-pod": [("acme", "theirs")], "other-pod": []},
            error="was not created for pod default/my-pod (pod is not owner)",
            events=tuple(
                f"{involved} FailedResourceClaimCreation: PodResourceClaim acme: ResourceClaim "
                "default/theirs was not created for pod default/my-pod (pod is not owner); "
                "pod.status.resourceClaimStatuses names it, so no claim is created until that "
                "claim or the status entry is removed"
                # The foreign claim is told too, so `kubectl describe resourceclaim` explains.
                for involved in ("Pod/my-pod", "ResourceClaim/theirs")
            ),
        ),
        id="claim-owned-by-other-pod",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                from_pod(pod)
                .claim_template("extra", "my-template")
                .claim_status("extra", "extra-claim")
                .obj(),
                make_claim("extra-claim")
                .owned_by_pod(pod)
                .annotation(ANNOTATION_POD_CLAIM_NAME, "extra")
                .obj(),
            ),
            key=pod_key(),
            claims={
                "extra-claim": view(owner="my-pod", pod_claim="extra"),
                GENERATED: OWNED,
            },
            statuses={"my-pod": [("acme", GENERATED), ("extra", "extra-claim")]},
            attempts=1,
        ),
        id="create-with-other-claim-status",
    ),
    pytest.param(
        Case(
            objects=(running_user_pod,),
            key=pod_key("user-pod"),
            claims={},
            statuses={"user-pod": []},
        ),
        id="user-claim-missing-is-not-created",
    ),
    pytest.param(
        Case(
            objects=(template, from_pod(pod).claim_status("acme", None).obj()),
            key=pod_key(),
            claims={},
            statuses={"my-pod": [("acme", None)]},
        ),
        id="status-says-no-claim-needed",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                pod,
                make_claim("going")
                .owned_by_pod(pod)
                .annotation(ANNOTATION_POD_CLAIM_NAME, "acme")
                .finalizer(KEEP)
                .deletion_timestamp()
                .obj(),
            ),
            key=pod_key(),
            claims={"going": OWNED | {"deleting": True}, GENERATED: OWNED},
            statuses={"my-pod": [("acme", GENERATED)]},
            attempts=1,
        ),
        id="recovery-skips-claim-being-deleted",
    ),
    pytest.param(
        Case(
            objects=(
                template,
                pod_with_claim,
                make_claim("found")
                .owned_by_pod(pod)
                .annotation(ANNOTATION_POD_CLAIM_NAME, "acme")
                .obj(),
            ),
            key=pod_key(),
            claims={"found": OWNED},
            statuses={"my-pod": [("acme", "found")]},
        ),
        id="recorded-claim-vanished-recovers-owned-claim",
    ),
    pytest.param(
        Case(
            objects=(template, from_pod(pod).claim_template("extra", "my-template").obj()),
            key=pod_key(),
            claims={GENERATED: OWNED, "my-pod-extra-*": view(owner="my-pod", pod_claim="extra")},
            statuses={"my-pod": [("acme", GENERATED), ("extra", "my-pod-extra-*")]},
            attempts=2,
        ),
        id="several-template-claims-recorded-in-one-write",
    ),
    pytest.param(
        Case(
            objects=(template, from_pod(pod).claim_template("extra", "missing").obj()),
            key=pod_key(),
            claims={GENERATED: OWNED},
            statuses={"my-pod": []},
            attempts=1,
            error='PodResourceClaim extra: resource claim template "missing"',
            events=(
                "Pod/my-pod FailedResourceClaimCreation: PodResourceClaim extra: resource claim "
                "template "
                '"missing": resourceclaimtemplates.resource.k8s.io "missing" not found',
            ),
        ),
        id="failure-writes-no-status-for-the-pass",
    ),
    pytest.param(
        Case(
            objects=(user_claim, running_user_pod),
            key=pod_key("user-pod"),
            claims={"user-claim": view()},
            statuses={"user-pod": []},
        ),
        id="user-claim-exists",
    ),
]


@pytest.mark.parametrize("case", POD_SYNC_CASES)
async def test_sync_pod(case: Case, cluster, seed, start_controller) -> None:
    await run_case(case, cluster=cluster, seed=seed, start_controller=start_controller)


async def test_no_source_pod_claim_is_reported(cluster, seed, start_controller) -> None:
    """Validation rejects such pods; one written by a newer API server is still reported."""
    stored = await seed(pod)
    newer = meta.deep_copy(stored["Pod/default/my-pod"])
    newer["spec"]["resourceClaims"][0]["source"] = {"futureField": "x"}
    await cluster.storage.update(PODS.key, newer)
    harness = await start_controller()
    with pytest.raises(Exception, match="none of the supported fields are set"):
        await harness.controller.sync(pod_key())
    await harness.controller.recorder.flush()
    assert await warning_events(cluster.client()) == [
        "Pod/my-pod FailedResourceClaimCreation: PodResourceClaim acme: checking for claim "
        'before creating it: pod "default/my-pod", spec.resourceClaim "acme": none of the '
        "supported fields are set"
    ]


async def test_running_controller_recreates_deleted_claim_and_reacts_to_new_template(
    cluster, seed, start_controller
) -> None:
    await seed(pod)
    # A backoff far longer than the test: only the template's add event can trigger the retry.
    harness = await start_controller(
        rate_limiter=ItemExponentialFailureRateLimiter(base=100, cap=100)
    )
    running = asyncio.create_task(harness.controller.run())
    admin = cluster.client()
    try:
        await wait_for(lambda: _has_event(admin))
        await admin.create(RESOURCE_CLAIM_TEMPLATES, template, "default")
        await wait_for(lambda: _recorded_claim(admin))
        first = await _recorded_claim(admin)
        await admin.delete(RESOURCE_CLAIMS, first, "default")

        async def replaced() -> bool:
            name = await _recorded_claim(admin)
            return name not in ("", first)

        await wait_for(replaced)
        claims, _ = await claim_views(admin)
        assert claims == {GENERATED: OWNED}
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def _has_event(client: Client) -> bool:
    return bool(await warning_events(client))


async def _recorded_claim(client: Client) -> str:
    """The claim named in my-pod's status, if that claim exists."""
    current = await client.get(PODS, "my-pod", "default")
    for entry in (current.get("status") or {}).get("resourceClaimStatuses") or []:
        try:
            await client.get(RESOURCE_CLAIMS, entry["resourceClaimName"], "default")
        except StatusError:
            return ""
        return str(entry["resourceClaimName"])
    return ""
