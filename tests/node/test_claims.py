"""The node's DRA manager against spec/claim-controller.md §8.1: claims resolve only through
`dra.name()` (a status entry without a name means no claim), template claims must be owned by
the pod, every claim must be reserved for the pod, and claims no container uses are checked but
not prepared."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.node import NOT_READY
from draplane.testing.apistate import events_for, seed_objects, wait_for
from draplane.testing.builders import make_claim, make_class, make_pod

from .conftest import Env, allocated

stranger = make_pod("stranger").obj()


def unused_by_containers(pod: Obj) -> Obj:
    del pod["spec"]["containers"][0]["resources"]["claims"]
    return pod


def ready_claim(name: str = "my-claim", *, for_pod: Obj) -> Obj:
    return allocated(make_claim(name), node="node-0").reserved_for(for_pod).obj()


def template_pod(status: str | None) -> Obj:
    return make_pod().claim_template("gpu", "tmpl").claim_status("gpu", status).obj()


def user_pod() -> Obj:
    return make_pod().claim_ref("gpu", "my-claim").obj()


theirs_pod = template_pod("theirs")


@dataclass(frozen=True)
class Runs:
    pod: Obj
    claims: tuple[Obj, ...]
    prepared: int


RUNS = [
    pytest.param(Runs(template_pod(None), (), 0), id="status-says-no-claim-needed"),
    pytest.param(
        Runs(
            make_pod()
            .claim_template("none", "tmpl")
            .claim_status("none", None)
            .claim_ref("gpu", "my-claim")
            .obj(),
            (ready_claim(for_pod=make_pod().obj()),),
            1,
        ),
        id="no-claim-needed-next-to-a-real-claim",
    ),
    pytest.param(
        Runs(unused_by_containers(user_pod()), (ready_claim(for_pod=user_pod()),), 0),
        id="claim-no-container-uses-is-not-prepared",
    ),
    pytest.param(
        Runs(
            template_pod("generated"),
            (allocated(make_claim("generated"), node="node-0").obj(),),
            1,
        ),
        id="owned-template-claim",
    ),
]


@pytest.mark.parametrize("case", RUNS)
async def test_pod_runs(env: Env, case: Runs) -> None:
    await env.start_nodes(1)
    pod = case.pod
    claims = [meta.deep_copy(c) for c in case.claims]
    for claim in claims:
        # Reserved for (and, for generated claims, owned by) the pod under test.
        claim["status"]["reservedFor"] = [
            {"resource": "pods", "name": "my-pod", "uid": meta.uid(pod)}
        ]
        if meta.name(claim) == "generated":
            claim["metadata"]["ownerReferences"] = [meta.owner_reference(pod, controller=True)]
    stored = await seed_objects(env.admin, make_class().obj(), pod, *claims)
    await env.bind(stored[1], "node-0")

    async def running() -> Obj | None:
        current = await env.pod()
        return current if (current.get("status") or {}).get("phase") == "Running" else None

    await wait_for(running, what="Running")
    assert len(env.plugin("node-0").prepared) == case.prepared
    assert await events_for(env.admin, stored[1], reason=NOT_READY) == []


@dataclass(frozen=True)
class Waits:
    pod: Obj
    claims: tuple[Obj, ...]
    message: str


WAITS = [
    pytest.param(
        Waits(
            make_pod("my-pod", "default").claim_template("gpu", "tmpl").obj(),
            (),
            'prepare resource claim: pod "default/my-pod": ResourceClaim not created yet',
        ),
        id="template-claim-not-created-yet",
    ),
    pytest.param(
        Waits(
            theirs_pod,
            (
                allocated(make_claim("theirs"), node="node-0")
                .owned_by_pod(stranger)
                .reserved_for(theirs_pod)
                .obj(),
            ),
            "ResourceClaim default/theirs was not created for pod default/my-pod "
            "(pod is not owner)",
        ),
        id="template-claim-of-another-pod",
    ),
    pytest.param(
        Waits(
            unused_by_containers(user_pod()),
            (allocated(make_claim(), node="node-0").obj(),),
            "pod default/my-pod(<uid>) is not allowed to use resource claim my-claim(<claim-uid>)",
        ),
        id="claim-no-container-uses-must-still-be-reserved",
    ),
    pytest.param(
        Waits(
            user_pod(),
            (),
            "failed to fetch ResourceClaim my-claim referenced by pod default/my-pod: "
            'resourceclaims.resource.k8s.io "my-claim" not found',
        ),
        id="user-claim-missing",
    ),
]


@pytest.mark.parametrize("case", WAITS)
async def test_pod_waits_with_warning(env: Env, case: Waits) -> None:
    await env.start_nodes(1)
    stored = await seed_objects(env.admin, make_class().obj(), case.pod, *case.claims)
    pod = stored[1]
    await env.bind(pod, "node-0")
    events = await wait_for(
        lambda: events_for(env.admin, pod, reason=NOT_READY), what="ClaimNotReady event"
    )
    claim_uid = meta.uid(stored[2]) if len(stored) > 2 else ""
    assert events[0]["type"] == "Warning"
    assert events[0]["message"] == case.message.replace("<uid>", meta.uid(pod)).replace(
        "<claim-uid>", claim_uid
    )
    assert (await env.pod())["status"]["phase"] == "Pending"
    assert env.plugin("node-0").prepared == {}
