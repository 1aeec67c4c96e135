"""`dra.name()` and the claim predicates, one row per branch of spec/claim-controller.md §3."""

from __future__ import annotations

import pytest

from draplane.api.meta import Obj
from draplane.dra import claims as dra
from draplane.testing.builders import from_claim, make_claim, make_pod

pod = make_pod("my-pod").obj()
other_pod = make_pod("other-pod").obj()


@pytest.mark.parametrize(
    ("pod_obj", "expected"),
    [
        pytest.param(
            make_pod("p").claim_ref("c", "user-claim").obj(),
            ("user-claim", False),
            id="user-claim",
        ),
        pytest.param(
            make_pod("p").claim_ref("c", "user-claim").claim_status("c", "ignored").obj(),
            ("user-claim", False),
            id="user-claim-ignores-status",
        ),
        pytest.param(
            make_pod("p").claim_template("c", "t").claim_status("c", "p-c-abcde").obj(),
            ("p-c-abcde", True),
            id="template-claim-recorded",
        ),
        pytest.param(
            make_pod("p").claim_template("c", "t").claim_status("c", None).obj(),
            (None, True),
            id="template-claim-not-needed",
        ),
        pytest.param(
            make_pod("p")
            .claim_template("c", "t")
            .claim_status("other", "x")
            .claim_status("c", "first")
            .claim_status("c", "second")
            .obj(),
            ("first", True),
            id="first-matching-entry-wins",
        ),
    ],
)
def test_name(pod_obj: Obj, expected: tuple[str | None, bool]) -> None:
    assert dra.name(pod_obj, pod_obj["spec"]["resourceClaims"][0]) == expected


@pytest.mark.parametrize(
    ("pod_obj", "error", "message"),
    [
        pytest.param(
            make_pod("p", "ns").claim_template("c", "t").obj(),
            dra.ErrClaimNotFound,
            'pod "ns/p": ResourceClaim not created yet',
            id="template-claim-not-created",
        ),
        pytest.param(
            make_pod("p", "ns").claim_no_source("c").obj(),
            dra.ErrAPIUnsupported,
            'pod "ns/p", spec.resourceClaim "c": none of the supported fields are set',
            id="no-source",
        ),
    ],
)
def test_name_errors(pod_obj: Obj, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        dra.name(pod_obj, pod_obj["spec"]["resourceClaims"][0])
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        pytest.param(make_claim("c").owned_by_pod(pod).obj(), None, id="owned"),
        pytest.param(
            make_claim("c").owned_by_pod(other_pod).obj(),
            "ResourceClaim default/c was not created for pod default/my-pod (pod is not owner)",
            id="owned-by-other-pod",
        ),
        pytest.param(
            make_claim("c").owner("Pod", "my-pod", pod["metadata"]["uid"], controller=False).obj(),
            "ResourceClaim default/c was not created for pod default/my-pod (pod is not owner)",
            id="not-controller",
        ),
        pytest.param(
            make_claim("c", "elsewhere").owned_by_pod(pod).obj(),
            "ResourceClaim elsewhere/c was not created for pod default/my-pod (pod is not owner)",
            id="other-namespace",
        ),
        pytest.param(
            make_claim("c").obj(),
            "ResourceClaim default/c was not created for pod default/my-pod (pod is not owner)",
            id="no-owner",
        ),
    ],
)
def test_is_for_pod(claim: Obj, expected: str | None) -> None:
    assert dra.is_for_pod(pod, claim) == expected


allocated = make_claim("c").allocation().obj()


@pytest.mark.parametrize(
    ("claim", "reserved", "can_reserve"),
    [
        pytest.param(make_claim("c").obj(), False, False, id="unallocated"),
        pytest.param(allocated, False, True, id="allocated-free"),
        pytest.param(from_claim(allocated).reserved_for(pod).obj(), True, False, id="reserved"),
        pytest.param(from_claim(allocated).reserved_for(other_pod).obj(), False, False, id="taken"),
        pytest.param(
            make_claim("c").allocation(shareable=True).reserved_for(other_pod).obj(),
            False,
            True,
            id="shareable",
        ),
    ],
)
def test_reservation(claim: Obj, reserved: bool, can_reserve: bool) -> None:
    assert dra.is_reserved_for_pod(pod, claim) is reserved
    assert dra.can_be_reserved(claim) is can_reserve
