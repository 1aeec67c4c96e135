"""Pod validation of the fields Kubernetes 1.36 serves beyond 1.28: a container's
`resources.claims[].request` (a DNS label; name/request unique) and pod-level `resources`
(no claims; requests within limits)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from draplane.api import kinds, versions
from draplane.api.meta import Obj
from draplane.api.schema import schemas_for
from draplane.testing import kindrules as validation
from draplane.testing.builders import make_pod

INV, DUP, FORB, NOT_FOUND = (
    "FieldValueInvalid",
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueNotFound",
)
CLAIMS = "spec.containers[0].resources.claims"


@dataclass(frozen=True)
class Case:
    claims: list[Any] | None = None
    """The container's resources.claims (the pod has claims `gpu` and `nic`)."""
    pod_resources: Any = None
    causes: list[tuple[str, str]] = field(default_factory=list)
    detail: str = ""


def _pod(case: Case) -> Obj:
    pod = make_pod().claim_ref("gpu", "gpu-claim", mode=versions.STRUCTURED)
    obj = pod.claim_ref("nic", "nic-claim", mode=versions.STRUCTURED).obj()
    if case.claims is not None:
        obj["spec"]["containers"][0]["resources"]["claims"] = case.claims
    if case.pod_resources is not None:
        obj["spec"]["resources"] = case.pod_resources
    validation.default(kinds.PODS, obj)
    return obj


CASES = [
    pytest.param(Case(claims=[{"name": "gpu", "request": "big"}]), id="one-request"),
    pytest.param(
        Case(claims=[{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "b"}]),
        id="two-requests-of-one-claim",
    ),
    pytest.param(
        Case(claims=[{"name": "gpu"}, {"name": "gpu", "request": "a"}]),
        id="whole-claim-and-one-request",
    ),
    pytest.param(
        Case(
            claims=[{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "a"}],
            causes=[(DUP, f"{CLAIMS}[1]")],
        ),
        id="same-request-twice",
    ),
    pytest.param(
        Case(
            claims=[{"name": "gpu", "request": "Big_One"}],
            causes=[(INV, f"{CLAIMS}[0].request")],
            detail="a lowercase RFC 1123 label",
        ),
        id="request-not-a-dns-label",
    ),
    pytest.param(
        Case(
            claims=[{"name": "tpu", "request": "a"}],
            causes=[(NOT_FOUND, f"{CLAIMS}[0]")],
            detail="must be one of the names in pod.spec.resourceClaims: gpu, nic",
        ),
        id="request-of-an-unknown-claim",
    ),
    pytest.param(
        Case(pod_resources={"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}}),
        id="pod-resources",
    ),
    pytest.param(
        Case(
            pod_resources={"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]},
            causes=[(FORB, "spec.resources.claims")],
            detail="claims cannot be set for Resources",
        ),
        id="pod-resources-claims",
    ),
    pytest.param(
        Case(
            pod_resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            causes=[(INV, "spec.resources.requests")],
            detail="must be less than or equal to cpu limit of 1",
        ),
        id="pod-resources-request-above-limit",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_validate_136_pod_fields(case: Case) -> None:
    errs = validation.validate_create(kinds.PODS, _pod(case), schemas_for(versions.STRUCTURED.name))
    assert [(e.type, e.field) for e in errs] == case.causes
    if case.detail:
        assert any(case.detail in e.detail for e in errs), [e.detail for e in errs]
