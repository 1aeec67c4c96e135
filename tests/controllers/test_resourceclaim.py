"""Resource claim controller: pod sync and claim sync, one table row per branch of
spec/claim-controller.md §5 and §6, run against the real registry through `sync(key)`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from draplane.api import meta
from draplane.api.errors import StatusError
from draplane.api.kinds import (
    EVENTS,
    POD_SCHEDULING_CONTEXTS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
)
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.resourceclaim_needs import pod_needs_work
from draplane.dra.claims import ANNOTATION_POD_CLAIM_NAME
from draplane.testing.builders import (
    from_claim,
    from_pod,
    make_claim,
    make_pod,
    make_scheduling_context,
    make_template,
)

ATTEMPTS = "resourceclaim_controller_create_attempts_total"
FAILURES = "resourceclaim_controller_create_failures_total"
GENERATED = "my-pod-acme-*"

template = make_template("my-template").obj()
pod = make_pod("my-pod").claim_template("acme", "my-template").obj()
other_pod = make_pod("other-pod").obj()
pod_with_claim = from_pod(pod).claim_status("acme", "my-pod-acme-abcde").obj()
scheduled_pod = from_pod(pod_with_claim).node("worker").obj()
done_pod = from_pod(pod_with_claim).phase("Succeeded").obj()
generated_claim = (
    make_claim("my-pod-acme-abcde").owned_by_pod(pod).annotation(ANNOTATION_POD_CLAIM_NAME, "acme")
).obj()
allocated_claim = from_claim(generated_claim).allocation(node="worker").obj()
user_claim = make_claim("user-claim").obj()
running_user_pod = make_pod("user-pod").claim_ref("c", "user-claim").obj()
done_user_pod = from_pod(running_user_pod).phase("Succeeded").obj()
allocated_user_claim = from_claim(user_claim).allocation().obj()


def view(*, owner: str | None = None, pod_claim: str | None = None, **extra: Any) -> Obj:
    return {"owner": owner, "podClaim": pod_claim, "reservedFor": [], "dealloc": False} | extra


OWNED = view(owner="my-pod", pod_claim="acme")


@dataclass(frozen=True)
class Case:
    objects: tuple[Obj, ...]
    key: ObjectKey
    claims: dict[str, Obj]
    statuses: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    error: str = ""
    events: tuple[str, ...] = ()
    attempts: int = 0
    scheduling_contexts: dict[str, str] = field(default_factory=dict)


def pod_key(name: str = "my-pod") -> ObjectKey:
    return ObjectKey("Pod", "default", name)


def claim_key(name: str) -> ObjectKey:
    return ObjectKey("ResourceClaim", "default", name)


def _display_name(claim: Obj) -> str:
    """Generated names end in 5 random characters: show them as `*`."""
    generate_name = meta.metadata(claim).get("generateName")
    name = meta.name(claim)
    if generate_name and name.startswith(generate_name) and len(name) == len(generate_name) + 5:
        return generate_name + "*"
    return name


async def claim_views(client: Client) -> tuple[dict[str, Obj], dict[str, str]]:
    """Claims as {display name: view}, and actual name -> display name."""
    items = (await client.list(RESOURCE_CLAIMS, "default"))["items"]
    views: dict[str, Obj] = {}
    names: dict[str, str] = {}
    for claim in items:
        ref = meta.controller_ref(claim)
        status = claim.get("status") or {}
        views[_display_name(claim)] = view(
            owner=ref["name"] if ref else None,
            pod_claim=meta.annotations(claim).get(ANNOTATION_POD_CLAIM_NAME),
            reservedFor=[entry["name"] for entry in status.get("reservedFor") or []],
            dealloc=bool(status.get("deallocationRequested")),
        )
        names[meta.name(claim)] = _display_name(claim)
    return views, names


async def pod_statuses(
    client: Client, names: dict[str, str]
) -> dict[str, list[tuple[str, str | None]]]:
    out: dict[str, list[tuple[str, str | None]]] = {}
    for item in (await client.list(PODS, "default"))["items"]:
        entries = (item.get("status") or {}).get("resourceClaimStatuses") or []
        out[meta.name(item)] = sorted(
            (e["name"], names.get(e.get("resourceClaimName"), e.get("resourceClaimName")))
            for e in entries
        )
    return out


async def warning_events(client: Client) -> list[str]:
    items = (await client.list(EVENTS, "default"))["items"]
    return sorted(f"{e['reason']}: {e['message']}" for e in items if e.get("type") == "Warning")


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
                "FailedResourceClaimCreation: PodResourceClaim acme: resource claim template "
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
            events=(
                "FailedResourceClaimCreation: PodResourceClaim acme: ResourceClaim "
                "default/theirs was not created for pod default/my-pod (pod is not owner); "
                "pod.status.resourceClaimStatuses names it, so no claim is created until that "
                "claim or the status entry is removed",
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
]

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
]

CLAIM_SYNC_CASES = [
    pytest.param(Case(objects=(), key=claim_key("nothing"), claims={}), id="no-such-claim"),
    pytest.param(
        Case(
            objects=(
                done_user_pod,
                from_claim(allocated_user_claim).reserved_for(done_user_pod).obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(dealloc=True)},
            statuses={"user-pod": []},
        ),
        id="clean-reserved-pod",
    ),
    pytest.param(
        Case(
            objects=(from_claim(allocated_user_claim).reserved_for(running_user_pod).obj(),),
            key=claim_key("user-claim"),
            claims={"user-claim": view(dealloc=True)},
        ),
        id="clean-reserved-not-seen",
    ),
    pytest.param(
        Case(
            objects=(
                make_pod("user-pod").obj(),
                from_claim(allocated_user_claim).reserved_for(running_user_pod).obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(dealloc=True)},
            statuses={"user-pod": []},
        ),
        id="clean-reserved-replaced-pod",
    ),
    pytest.param(
        Case(
            objects=(
                running_user_pod,
                from_claim(allocated_user_claim).reserved_for(running_user_pod).obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(reservedFor=["user-pod"])},
            statuses={"user-pod": []},
        ),
        id="keep-reserved-pod",
    ),
    pytest.param(
        Case(
            objects=(
                done_user_pod,
                from_claim(allocated_user_claim)
                .allocation_mode("Immediate")
                .reserved_for(done_user_pod)
                .obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view()},
            statuses={"user-pod": []},
        ),
        id="clean-reserved-immediate-stays-allocated",
    ),
    pytest.param(
        Case(
            objects=(from_pod(done_pod).phase("Failed").obj(), generated_claim),
            key=claim_key("my-pod-acme-abcde"),
            claims={},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="delete-claim-when-done",
    ),
    pytest.param(
        Case(
            objects=(done_pod, from_claim(allocated_claim).reserved_for(done_pod).obj()),
            key=claim_key("my-pod-acme-abcde"),
            claims={},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="clean-reserved-and-delete-when-done",
    ),
    pytest.param(
        Case(
            objects=(pod_with_claim, generated_claim),
            key=claim_key("my-pod-acme-abcde"),
            claims={"my-pod-acme-abcde": OWNED},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="keep-claim-of-running-pod",
    ),
    pytest.param(
        Case(
            objects=(
                make_pod("my-pod").obj(),
                make_claim("my-pod-acme-abcde")
                .owned_by_pod(pod)
                .annotation(ANNOTATION_POD_CLAIM_NAME, "acme")
                .obj(),
            ),
            key=claim_key("my-pod-acme-abcde"),
            claims={},
            statuses={"my-pod": []},
        ),
        id="delete-claim-of-replaced-pod",
    ),
    pytest.param(
        Case(
            objects=(generated_claim,),
            key=claim_key("my-pod-acme-abcde"),
            claims={"my-pod-acme-abcde": OWNED},
        ),
        id="claim-of-unknown-pod-is-left-to-gc",
    ),
    pytest.param(
        Case(
            objects=(
                from_claim(allocated_user_claim)
                .set("status.reservedFor", [{"resource": "foos", "name": "x", "uid": "1"}])
                .obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(reservedFor=["x"])},
            error="unsupported ReservedFor entry",
        ),
        id="unsupported-reserved-for",
    ),
]


@pytest.mark.parametrize("case", POD_SYNC_CASES + SCHEDULED_POD_CASES + CLAIM_SYNC_CASES)
async def test_sync(case: Case, cluster, seed, start_controller) -> None:
    await seed(*case.objects)
    harness = await start_controller()
    if case.error:
        with pytest.raises(Exception, match=case.error.replace("(", r"\(").replace(")", r"\)")):
            await harness.controller.sync(case.key)
    else:
        await harness.controller.sync(case.key)
    await harness.controller.recorder.flush()

    admin = cluster.client()
    claims, names = await claim_views(admin)
    assert claims == case.claims
    assert await pod_statuses(admin, names) == case.statuses
    assert await warning_events(admin) == sorted(case.events)
    assert harness.counter(ATTEMPTS) == case.attempts
    assert harness.counter(FAILURES) == 0
    contexts = (await admin.list(POD_SCHEDULING_CONTEXTS, "default"))["items"]
    assert {meta.name(c): c["spec"].get("selectedNode") for c in contexts} == (
        case.scheduling_contexts
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
        "FailedResourceClaimCreation: PodResourceClaim acme: checking for claim before creating "
        'it: pod "default/my-pod", spec.resourceClaim "acme": none of the supported fields are set'
    ]


class CountingClient:
    """Delegates to a client and records (verb, resource) of every call."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str]] = []

    def __getattr__(self, verb: str) -> Any:
        method = getattr(self.inner, verb)
        if not callable(method):
            return method

        async def call(rt, *args: Any, **kw: Any) -> Any:
            self.calls.append((verb, rt.resource))
            return await method(rt, *args, **kw)

        return call


async def test_deleted_pod_is_dropped_without_asking_the_api(
    cluster, seed, start_controller
) -> None:
    stored = await seed(
        running_user_pod,
        from_claim(allocated_user_claim).reserved_for(running_user_pod).obj(),
    )
    counting = CountingClient(cluster.client())
    harness = await start_controller(counting)
    await cluster.client().delete(PODS, "user-pod", "default")
    uid = meta.uid(stored["Pod/default/user-pod"])

    async def forgotten() -> None:
        while uid not in harness.controller.ctx.deleted_pods:
            await asyncio.sleep(0.005)

    await asyncio.wait_for(forgotten(), 5)
    counting.calls.clear()
    await harness.controller.sync(claim_key("user-claim"))
    assert ("get", "pods") not in counting.calls
    claims, _ = await claim_views(cluster.client())
    assert claims == {"user-claim": view(dealloc=True)}


async def eventually(check, timeout: float = 5.0) -> None:
    async def poll() -> None:
        while not await check():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


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
        await eventually(lambda: _has_event(admin))
        await admin.create(RESOURCE_CLAIM_TEMPLATES, template, "default")
        await eventually(lambda: _recorded_claim(admin))
        first = await _recorded_claim(admin)
        await admin.delete(RESOURCE_CLAIMS, first, "default")

        async def replaced() -> bool:
            name = await _recorded_claim(admin)
            return name not in ("", first)

        await eventually(replaced)
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
