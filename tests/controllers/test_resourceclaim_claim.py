"""Resource claim controller, claim side: syncClaim (one table row per branch of
spec/claim-controller.md §6) against the real registry through `sync(key)`, plus the API
fallback for pods the informer has not seen and the deleted-pod memory."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import meta
from draplane.api.errors import internal
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.testing.apistate import wait_for
from draplane.testing.builders import from_claim, from_pod, make_claim, make_pod

from .conftest import (
    KEEP,
    OWNED,
    Case,
    allocated_claim,
    allocated_user_claim,
    claim_key,
    claim_views,
    done_pod,
    done_user_pod,
    generated_claim,
    pod,
    pod_with_claim,
    run_case,
    running_user_pod,
    view,
)

unscheduled_deleting_user_pod = from_pod(running_user_pod).finalizer(KEEP).deletion_timestamp()
foreign_entry = {"apiGroup": "example.com", "resource": "foos", "name": "x", "uid": "1"}
stale_entry = {"resource": "pods", "name": "gone", "uid": "gone-uid"}

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
            objects=(
                from_pod(running_user_pod).phase("Failed").obj(),
                from_claim(allocated_user_claim).reserved_for(running_user_pod).obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(dealloc=True)},
            statuses={"user-pod": []},
        ),
        id="clean-reserved-failed-pod",
    ),
    pytest.param(
        Case(
            objects=(
                unscheduled_deleting_user_pod.obj(),
                from_claim(allocated_user_claim).reserved_for(running_user_pod).obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(dealloc=True)},
            statuses={"user-pod": []},
        ),
        id="clean-reserved-pod-deleted-before-scheduling",
    ),
    pytest.param(
        Case(
            objects=(
                from_pod(running_user_pod)
                .node("worker")
                .finalizer(KEEP)
                .deletion_timestamp()
                .obj(),
                from_claim(allocated_user_claim).reserved_for(running_user_pod).obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(reservedFor=["user-pod"])},
            statuses={"user-pod": []},
        ),
        id="keep-reserved-bound-pod-being-deleted",
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
            objects=(running_user_pod, allocated_user_claim),
            key=claim_key("user-claim"),
            claims={"user-claim": view()},
            statuses={"user-pod": []},
        ),
        id="allocated-never-reserved-is-left-allocated",
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
            objects=(
                from_pod(pod_with_claim).finalizer(KEEP).deletion_timestamp().obj(),
                generated_claim,
            ),
            key=claim_key("my-pod-acme-abcde"),
            claims={},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="delete-claim-when-pod-deleted-before-scheduling",
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
                pod_with_claim,
                from_claim(allocated_claim).reserved_for(make_pod("other").obj()).obj(),
            ),
            key=claim_key("my-pod-acme-abcde"),
            claims={"my-pod-acme-abcde": OWNED | {"dealloc": True}},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="unused-claim-of-running-pod-is-released-not-deleted",
    ),
    pytest.param(
        Case(
            objects=(
                make_pod("my-pod").obj(),
                make_claim("my-pod-acme-abcde").owned_by_pod(pod).obj(),
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
                done_pod,
                make_claim("my-pod-acme-abcde")
                .owner("Pod", "my-pod", pod["metadata"]["uid"], controller=False)
                .obj(),
            ),
            key=claim_key("my-pod-acme-abcde"),
            claims={"my-pod-acme-abcde": view()},
            statuses={"my-pod": [("acme", "my-pod-acme-abcde")]},
        ),
        id="claim-not-controlled-by-pod-is-kept",
    ),
    pytest.param(
        Case(
            objects=(
                from_claim(allocated_user_claim).set("status.reservedFor", [foreign_entry]).obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(reservedFor=["x"])},
            error="unsupported ReservedFor entry",
        ),
        id="unsupported-reserved-for",
    ),
    pytest.param(
        Case(
            objects=(
                from_claim(allocated_user_claim)
                .allocation(shareable=True)
                .set("status.reservedFor", [stale_entry, foreign_entry])
                .obj(),
            ),
            key=claim_key("user-claim"),
            claims={"user-claim": view(reservedFor=["gone", "x"])},
            error="unsupported ReservedFor entry",
        ),
        id="unsupported-entry-blocks-every-cleanup",
    ),
]


@pytest.mark.parametrize("case", CLAIM_SYNC_CASES)
async def test_sync_claim(case: Case, cluster, seed, start_controller) -> None:
    await run_case(case, cluster=cluster, seed=seed, start_controller=start_controller)


@pytest.mark.parametrize(
    ("api_pod", "reserved_for", "dealloc"),
    [
        pytest.param(running_user_pod, ["user-pod"], False, id="stay-reserved-not-seen"),
        pytest.param(done_user_pod, ["user-pod"], False, id="api-copy-is-not-checked-for-done"),
        pytest.param(
            from_pod(running_user_pod).uid("other-uid").obj(), [], True, id="replaced-on-api"
        ),
        pytest.param(None, [], True, id="missing-on-api"),
    ],
)
async def test_pod_unknown_to_the_informer_is_looked_up_on_the_api(
    api_pod: Obj | None, reserved_for: list[str], dealloc: bool, cluster, seed, start_controller
) -> None:
    """The informer may not have delivered a brand new pod yet: only the API can tell (§6 2)."""
    await seed(from_claim(allocated_user_claim).reserved_for(running_user_pod).obj())
    harness = await start_controller()
    await harness.informers.stop()
    if api_pod is not None:
        # Written to storage with the reserved UID, which the API server would not keep.
        await cluster.storage.create(PODS.key, meta.deep_copy(api_pod))
    await harness.controller.sync(claim_key("user-claim"))
    claims, _ = await claim_views(cluster.client())
    assert claims == {"user-claim": view(reservedFor=reserved_for, dealloc=dealloc)}


class FailingPodGets:
    """Delegates to a client; GETs of pods fail with a 500 (the API is unavailable)."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner

    def __getattr__(self, verb: str) -> Any:
        return getattr(self.inner, verb)

    async def get(self, rt: Any, *args: Any, **kw: Any) -> Obj:
        if rt is PODS:
            raise internal("etcd is unavailable")
        return await self.inner.get(rt, *args, **kw)


async def test_api_error_during_pod_lookup_fails_the_sync(cluster, seed, start_controller) -> None:
    await seed(from_claim(allocated_user_claim).reserved_for(running_user_pod).obj())
    harness = await start_controller(FailingPodGets(cluster.client()))
    with pytest.raises(Exception, match="etcd is unavailable"):
        await harness.controller.sync(claim_key("user-claim"))
    claims, _ = await claim_views(cluster.client())
    assert claims == {"user-claim": view(reservedFor=["user-pod"])}


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

    await wait_for(lambda: uid in harness.controller.ctx.deleted_pods, what="pod forgotten")
    counting.calls.clear()
    await harness.controller.sync(claim_key("user-claim"))
    assert ("get", "pods") not in counting.calls
    claims, _ = await claim_views(cluster.client())
    assert claims == {"user-claim": view(dealloc=True)}
