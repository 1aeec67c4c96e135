"""Admin access to devices through the API server (1.36, AuthorizedForAdmin and
AuthorizedForAdminStatus): a claim or template asking for `exactly.adminAccess: true`, or a new
allocation with an `adminAccess: true` result, is refused with upstream's Forbidden cause unless
the namespace carries `resource.kubernetes.io/admin-access: "true"`; once stored, such objects
are not checked again when the namespace loses the label."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import errors, kinds, meta, versions
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.testing.allocatorcases import allocation
from draplane.testing.cluster import Cluster
from draplane.testing.structured import (
    device_result,
    make_structured_claim,
    make_structured_claim_template,
)

LABEL = "resource.kubernetes.io/admin-access"
REFUSED = (
    "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: "
    "true` label on the containing namespace"
)
ADMIN_NS, PLAIN_NS, FALSE_NS = "admins", "users", "not-admins"
CLAIMS_V1BETA2 = {rt.resource: rt for rt in kinds.STRUCTURED_V1BETA2}["resourceclaims"]


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


@pytest.fixture
async def cluster(cluster: Cluster) -> Cluster:
    """The suite's 1.36 cluster with the three namespaces of the cases."""
    c = cluster
    client = c.client()
    for name, labels in ((ADMIN_NS, {LABEL: "true"}), (PLAIN_NS, {}), (FALSE_NS, {LABEL: "1"})):
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if labels:
            body["metadata"]["labels"] = labels
        await client.create(kinds.NAMESPACES, body)
    return c


def _claim(namespace: str, *, admin: bool | None) -> Obj:
    claim = make_structured_claim("c", namespace).request("plain", "gpu")
    claim = claim.request("admin", "gpu", admin_access=admin)
    obj = claim.obj()
    obj["metadata"].pop("uid")
    return obj


def _template(namespace: str, *, admin: bool | None) -> Obj:
    claim = make_structured_claim("t", namespace).request("plain", "gpu")
    claim = claim.request("admin", "gpu", admin_access=admin)
    obj = make_structured_claim_template("t", namespace, claim=claim).obj()
    obj["metadata"].pop("uid")
    return obj


@dataclass(frozen=True)
class Case:
    rt: ResourceType
    namespace: str
    admin: bool | None
    refused: bool


CASES = [
    pytest.param(Case(kinds.RESOURCE_CLAIMS_V1, ADMIN_NS, True, False), id="claim-admin-ns"),
    pytest.param(Case(kinds.RESOURCE_CLAIMS_V1, PLAIN_NS, True, True), id="claim-plain-ns"),
    pytest.param(Case(kinds.RESOURCE_CLAIMS_V1, FALSE_NS, True, True), id="claim-label-not-true"),
    pytest.param(Case(kinds.RESOURCE_CLAIMS_V1, PLAIN_NS, False, False), id="claim-false"),
    pytest.param(Case(kinds.RESOURCE_CLAIMS_V1, PLAIN_NS, None, False), id="claim-unset"),
    pytest.param(
        Case(kinds.RESOURCE_CLAIM_TEMPLATES_V1, ADMIN_NS, True, False), id="template-admin-ns"
    ),
    pytest.param(
        Case(kinds.RESOURCE_CLAIM_TEMPLATES_V1, PLAIN_NS, True, True), id="template-plain-ns"
    ),
    pytest.param(
        Case(kinds.RESOURCE_CLAIM_TEMPLATES_V1, PLAIN_NS, False, False), id="template-false"
    ),
    pytest.param(Case(CLAIMS_V1BETA2, PLAIN_NS, True, True), id="claim-v1beta2-plain-ns"),
]


@pytest.mark.parametrize("case", CASES)
async def test_create(cluster: Cluster, case: Case) -> None:
    client = cluster.client()
    template = case.rt.resource == "resourceclaimtemplates"
    obj = (_template if template else _claim)(case.namespace, admin=case.admin)
    if case.rt.version == "v1beta2":
        obj["apiVersion"] = case.rt.api_version

    if not case.refused:
        created = await client.create(case.rt, obj, case.namespace)
        assert created["metadata"]["uid"]
        return
    with pytest.raises(errors.StatusError) as err:
        await client.create(case.rt, obj, case.namespace)

    assert err.value.code == 422
    causes = err.value.details["causes"]
    # Upstream's path for templates too (their requests sit under spec.spec).
    assert [(c["reason"], c["field"], c["message"]) for c in causes] == [
        ("FieldValueForbidden", "spec.devices.requests[1].adminAccess", REFUSED)
    ]
    assert (await client.list(case.rt, case.namespace))["items"] == []


def _admin_allocation() -> Obj:
    return allocation(device_result("plain", "gpu-0", adminAccess=True), node="node-0")


@pytest.mark.parametrize(
    ("namespace", "refused"),
    [pytest.param(ADMIN_NS, False, id="admin-ns"), pytest.param(PLAIN_NS, True, id="plain-ns")],
)
async def test_status_granting_admin_access(
    cluster: Cluster, namespace: str, refused: bool
) -> None:
    client = cluster.client()
    created = await client.create(
        kinds.RESOURCE_CLAIMS_V1, _claim(namespace, admin=None), namespace
    )
    update = meta.deep_copy(created)
    update["status"] = {"allocation": _admin_allocation()}

    if not refused:
        updated = await client.update(kinds.RESOURCE_CLAIMS_V1, update, subresource="status")
        assert updated["status"]["allocation"] == _admin_allocation()
        return
    with pytest.raises(errors.StatusError) as err:
        await client.update(kinds.RESOURCE_CLAIMS_V1, update, subresource="status")

    assert err.value.code == 422
    assert [(c["field"], c["message"]) for c in err.value.details["causes"]] == [
        ("status.allocation.devices.results[0].adminAccess", REFUSED)
    ]
    stored = await client.get(kinds.RESOURCE_CLAIMS_V1, "c", namespace)
    assert "allocation" not in (stored.get("status") or {})


async def test_stored_admin_objects_stay_writable_without_the_label(cluster: Cluster) -> None:
    client = cluster.client()
    claim = await client.create(kinds.RESOURCE_CLAIMS_V1, _claim(ADMIN_NS, admin=True), ADMIN_NS)
    allocated = meta.deep_copy(claim)
    allocated["status"] = {"allocation": _admin_allocation()}
    allocated = await client.update(kinds.RESOURCE_CLAIMS_V1, allocated, subresource="status")
    ns = await client.get(kinds.NAMESPACES, ADMIN_NS)
    ns["metadata"]["labels"] = {}
    await client.update(kinds.NAMESPACES, ns)

    labelled = meta.deep_copy(allocated)
    labelled["metadata"]["labels"] = {"x": "y"}
    relabelled = await client.update(kinds.RESOURCE_CLAIMS_V1, labelled)
    reserved = meta.deep_copy(relabelled)
    reserved["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u1"}]
    reserved = await client.update(kinds.RESOURCE_CLAIMS_V1, reserved, subresource="status")

    assert relabelled["metadata"]["labels"] == {"x": "y"}
    assert reserved["status"]["allocation"] == _admin_allocation()
    assert reserved["status"]["reservedFor"][0]["uid"] == "u1"
