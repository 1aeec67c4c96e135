"""Job validation of `spec.managedBy` (Kubernetes 1.36): a domain-prefixed path of at most 63
bytes, immutable."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds, versions
from draplane.api.meta import Obj
from draplane.api.schema import schemas_for
from draplane.apiserver.strategies.workloads import generate_job_selector
from draplane.testing import kindrules as validation
from draplane.testing.workloadbuilders import make_job

SCHEMAS = schemas_for(versions.STRUCTURED.name)


def _job(managed_by: Any) -> Obj:
    job = make_job().obj()
    job["spec"]["managedBy"] = managed_by
    validation.default(kinds.JOBS, job)
    generate_job_selector(job)
    return job


@pytest.mark.parametrize(
    ("managed_by", "causes", "detail"),
    [
        pytest.param("kubernetes.io/job-controller", [], "", id="job-controller"),
        pytest.param("kueue.x-k8s.io/multikueue", [], "", id="other-manager"),
        pytest.param(
            "kueue",
            [("FieldValueInvalid", "spec.managedBy")],
            'must be a domain-prefixed path (such as "acme.io/foo")',
            id="no-path",
        ),
        pytest.param(
            "Kueue_IO/x",
            [("FieldValueInvalid", "spec.managedBy")],
            "a lowercase RFC 1123 subdomain",
            id="bad-domain",
        ),
        pytest.param(
            "acme.io/" + "x" * 60,
            [("FieldValueTooLong", "spec.managedBy")],
            "must have at most 63 bytes",
            id="too-long",
        ),
    ],
)
def test_managed_by_is_a_domain_prefixed_path(
    managed_by: str, causes: list[tuple[str, str]], detail: str
) -> None:
    errs = validation.validate_create(kinds.JOBS, _job(managed_by), SCHEMAS)
    assert [(e.type, e.field) for e in errs] == causes
    assert all(detail in e.detail for e in errs)


def test_managed_by_is_immutable() -> None:
    old = _job("acme.io/one")
    new = {**old, "spec": {**old["spec"], "managedBy": "acme.io/two"}}
    errs = validation.validate_update(kinds.JOBS, new, old, SCHEMAS)
    assert [(e.type, e.field, e.detail) for e in errs] == [
        ("FieldValueInvalid", "spec.managedBy", "field is immutable")
    ]
