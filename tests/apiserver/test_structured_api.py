"""The resource.k8s.io/v1 kinds through the registry in the 1.36 mode: each kind at each served
version (stored once, read at any), defaulting, 422s with field causes, immutability, the
status subresource, field selectors, tables, and the Node authorizer and NodeRestriction
limiting kubelets to their own node's ResourceSlices."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import errors, kinds, versions
from draplane.api.auth import UserInfo, node_user
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver import tables
from draplane.testing.cluster import Cluster

V1BETA2 = {rt.resource: rt for rt in kinds.STRUCTURED_V1BETA2}
V1BETA1 = {rt.resource: rt for rt in kinds.STRUCTURED_V1BETA1}
DRIVER = "gpu.example.com"


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


def _obj(rt: ResourceType, name: str, spec: Obj, namespace: str = "") -> Obj:
    md: Obj = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": md, "spec": spec}


# Hand-built, not draplane.testing.structured: one object per served version, in that version's
# shape (v1beta1's `basic` devices and flat requests), which the v1 builders do not write.
def _slice(name: str, node: str, rt: ResourceType = kinds.RESOURCE_SLICES) -> Obj:
    device: Obj = {"name": "d0", "attributes": {"model": {"string": "a"}}}
    if rt.version == "v1beta1":
        device = {"name": "d0", "basic": {"attributes": device["attributes"]}}
    spec = {
        "driver": DRIVER,
        "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
        "nodeName": node,
        "devices": [device],
    }
    return _obj(rt, name, spec)


def _claim(rt: ResourceType, name: str = "c") -> Obj:
    request: Obj = {"name": "r", "deviceClassName": "gpu"}
    if rt.version != "v1beta1":
        request = {"name": "r", "exactly": {"deviceClassName": "gpu"}}
    return _obj(rt, name, {"devices": {"requests": [request]}}, "default")


@pytest.mark.parametrize(
    "version",
    [pytest.param(v, id=v) for v in ("v1", "v1beta2", "v1beta1")],
)
async def test_every_kind_at_every_version(cluster: Cluster, version: str) -> None:
    by_resource = {rt.resource: rt for rt in kinds.STRUCTURED_DRA if rt.version == version}
    client = cluster.client()
    claims = by_resource["resourceclaims"]
    objects: list[tuple[ResourceType, Obj]] = [
        (by_resource["deviceclasses"], _obj(by_resource["deviceclasses"], "gpu", {})),
        (claims, _claim(claims)),
        (
            by_resource["resourceclaimtemplates"],
            _obj(
                by_resource["resourceclaimtemplates"],
                "t",
                {"spec": _claim(claims)["spec"]},
                "default",
            ),
        ),
        (by_resource["resourceslices"], _slice("s", "node-0", by_resource["resourceslices"])),
    ]
    for rt, obj in objects:
        created = await client.create(rt, obj, "default" if rt.namespaced else "")
        assert created["apiVersion"] == rt.api_version
        listed = await client.list(rt)
        assert [i["metadata"]["name"] for i in listed["items"]] == [obj["metadata"]["name"]]
        deleted = await client.delete(
            rt, obj["metadata"]["name"], created["metadata"].get("namespace", "")
        )
        assert deleted["kind"] == rt.kind


async def test_one_object_read_at_each_version(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(V1BETA1["resourceclaims"], _claim(V1BETA1["resourceclaims"]), "default")

    v1 = await client.get(kinds.RESOURCE_CLAIMS_V1, "c", "default")
    beta2 = await client.get(V1BETA2["resourceclaims"], "c", "default")
    beta1 = await client.get(V1BETA1["resourceclaims"], "c", "default")

    exact = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    assert v1["spec"]["devices"]["requests"] == [{"name": "r", "exactly": exact}]
    assert beta2["spec"] == v1["spec"]
    assert beta2["apiVersion"] == "resource.k8s.io/v1beta2"
    assert beta1["spec"]["devices"]["requests"] == [{"name": "r", **exact}]
    assert v1["status"] == {}


async def test_patch_at_a_beta_version_applies_to_its_shape(cluster: Cluster) -> None:
    client = cluster.client()
    rt = V1BETA1["resourceslices"]
    await client.create(rt, _slice("s", "node-0", rt))

    patched = await client.patch(
        rt,
        "s",
        {"spec": {"devices": [{"name": "d0", "basic": {"attributes": {"x": {"int": 1}}}}]}},
    )
    stored = await client.get(kinds.RESOURCE_SLICES, "s")

    assert patched["spec"]["devices"] == [
        {"name": "d0", "basic": {"attributes": {"x": {"int": 1}}}}
    ]
    assert stored["spec"]["devices"] == [{"name": "d0", "attributes": {"x": {"int": 1}}}]


async def test_invalid_objects_are_422_with_field_causes(cluster: Cluster) -> None:
    client = cluster.client()
    bad = _claim(kinds.RESOURCE_CLAIMS_V1)
    bad["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "Some"

    with pytest.raises(errors.StatusError) as err:
        await client.create(kinds.RESOURCE_CLAIMS_V1, bad, "default")

    assert err.value.code == 422
    causes = [(c["reason"], c["field"]) for c in err.value.details["causes"]]
    assert causes == [("FieldValueNotSupported", "spec.devices.requests[0].exactly.allocationMode")]
    assert (await client.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"] == []


async def test_claim_spec_is_immutable_and_status_is_a_subresource(cluster: Cluster) -> None:
    client = cluster.client()
    created = await client.create(
        kinds.RESOURCE_CLAIMS_V1,
        {**_claim(kinds.RESOURCE_CLAIMS_V1), "status": {"reservedFor": [{"resource": "pods"}]}},
        "default",
    )
    changed = {**created, "spec": {"devices": {"requests": []}}}
    with pytest.raises(errors.StatusError) as err:
        await client.update(kinds.RESOURCE_CLAIMS_V1, changed)
    allocation = {
        "devices": {
            "results": [{"request": "r", "driver": DRIVER, "pool": "node-0", "device": "d0"}]
        }
    }
    allocated = await client.update(
        kinds.RESOURCE_CLAIMS_V1,
        {**created, "status": {"allocation": allocation}},
        subresource="status",
    )
    other = {"devices": {"results": [{**allocation["devices"]["results"][0], "device": "d1"}]}}
    with pytest.raises(errors.StatusError) as again:
        await client.update(
            kinds.RESOURCE_CLAIMS_V1,
            {**allocated, "status": {"allocation": other}},
            subresource="status",
        )

    assert created["status"] == {}
    assert err.value.code == 422
    assert [c["field"] for c in err.value.details["causes"]] == ["spec"]
    assert allocated["status"] == {"allocation": allocation}
    assert again.value.code == 422


async def test_slices_by_field_selector_and_table(cluster: Cluster) -> None:
    client = cluster.client()
    for node in ("node-0", "node-1"):
        await client.create(kinds.RESOURCE_SLICES, _slice(f"{node}-gpu", node))

    on_node = await client.list(kinds.RESOURCE_SLICES, field_selector="spec.nodeName=node-1")
    by_driver = await client.list(kinds.RESOURCE_SLICES, field_selector=f"spec.driver={DRIVER}")
    with pytest.raises(errors.StatusError) as err:
        await client.list(kinds.RESOURCE_SLICES, field_selector="spec.pool.name=node-0")
    columns = [c["name"] for c in tables.column_definitions(kinds.RESOURCE_SLICES)]
    claim_columns = [c["name"] for c in tables.column_definitions(kinds.RESOURCE_CLAIMS_V1)]

    assert [i["metadata"]["name"] for i in on_node["items"]] == ["node-1-gpu"]
    assert len(by_driver["items"]) == 2
    assert err.value.code == 400
    assert columns == ["Name", "Node", "Driver", "Pool", "Age"]
    assert claim_columns == ["Name", "State", "Age"]


async def _outcome(call: Any) -> int:
    try:
        await call
    except errors.StatusError as err:
        return err.code
    return 200


async def test_a_node_writes_only_its_own_slices(cluster: Cluster) -> None:
    admin = cluster.client()
    await admin.create(kinds.RESOURCE_SLICES, _slice("other", "node-1"))
    network = _slice("network", "node-0")
    del network["spec"]["nodeName"]
    network["spec"]["allNodes"] = True
    await admin.create(kinds.RESOURCE_SLICES, network)
    node = cluster.client(node_user("node-0"))
    own = _slice("own", "node-0")

    with pytest.raises(errors.StatusError) as denied:
        await node.get(kinds.RESOURCE_SLICES, "other")
    results = {
        "create-own": await _outcome(node.create(kinds.RESOURCE_SLICES, own)),
        "get-own": await _outcome(node.get(kinds.RESOURCE_SLICES, "own")),
        "get-other": await _outcome(node.get(kinds.RESOURCE_SLICES, "other")),
        "get-network": await _outcome(node.get(kinds.RESOURCE_SLICES, "network")),
        "get-missing": await _outcome(node.get(kinds.RESOURCE_SLICES, "missing")),
        "update-network": await _outcome(
            node.patch(kinds.RESOURCE_SLICES, "network", {"spec": {"pool": {"generation": 1}}})
        ),
        "create-other": await _outcome(node.create(kinds.RESOURCE_SLICES, _slice("x", "node-1"))),
        "list-own": await _outcome(
            node.list(kinds.RESOURCE_SLICES, field_selector="spec.nodeName=node-0")
        ),
        "list-all": await _outcome(node.list(kinds.RESOURCE_SLICES)),
        "list-other": await _outcome(
            node.list(kinds.RESOURCE_SLICES, field_selector="spec.nodeName=node-1")
        ),
        "update-other": await _outcome(
            node.patch(kinds.RESOURCE_SLICES, "other", {"spec": {"pool": {"generation": 1}}})
        ),
        "update-own": await _outcome(
            node.patch(kinds.RESOURCE_SLICES, "own", {"spec": {"pool": {"generation": 1}}})
        ),
        "delete-other": await _outcome(node.delete(kinds.RESOURCE_SLICES, "other")),
        "delete-own": await _outcome(node.delete(kinds.RESOURCE_SLICES, "own")),
    }

    assert denied.value.message == (
        'resourceslices.resource.k8s.io "other" is forbidden: User "system:node:node-0" cannot '
        'get resource "resourceslices" in API group "resource.k8s.io" at the cluster scope: '
        "no relationship found between node 'node-0' and this object"
    )
    assert results == {
        "create-own": 200,
        "get-own": 200,
        "get-other": 403,
        "get-network": 403,
        "get-missing": 403,
        "update-network": 403,
        "create-other": 403,
        "list-own": 200,
        "list-all": 403,
        "list-other": 403,
        "update-other": 403,
        "update-own": 200,
        "delete-other": 403,
        "delete-own": 200,
    }
    assert sorted(
        i["metadata"]["name"] for i in (await admin.list(kinds.RESOURCE_SLICES))["items"]
    ) == ["network", "other"]


async def test_the_scheduler_reads_slices_and_classes_and_writes_claim_status(
    cluster: Cluster,
) -> None:
    scheduler = cluster.client(UserInfo("system:kube-scheduler", "", ()))
    admin = cluster.client()
    created = await admin.create(
        kinds.RESOURCE_CLAIMS_V1, _claim(kinds.RESOURCE_CLAIMS_V1), "default"
    )

    reads = [
        await _outcome(scheduler.list(rt)) for rt in (kinds.RESOURCE_SLICES, kinds.DEVICE_CLASSES)
    ]
    status = await _outcome(
        scheduler.update(kinds.RESOURCE_CLAIMS_V1, {**created, "status": {}}, subresource="status")
    )
    write_slice = await _outcome(scheduler.create(kinds.RESOURCE_SLICES, _slice("s", "node-0")))

    assert (reads, status, write_slice) == ([200, 200], 200, 403)


async def test_claim_status_fields_need_their_own_permissions(cluster: Cluster) -> None:
    """allocation/reservedFor need resourceclaims/binding, status.devices
    resourceclaims/driver (arbitrary-node:update) named by the driver, beyond
    resourceclaims/status."""
    admin = cluster.client()
    created = await admin.create(
        kinds.RESOURCE_CLAIMS_V1, _claim(kinds.RESOURCE_CLAIMS_V1), "default"
    )
    status_only = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "claim-status"},
        "rules": [
            {
                "apiGroups": ["resource.k8s.io"],
                "resources": ["resourceclaims/status"],
                "verbs": ["update"],
            }
        ],
    }
    await admin.create(kinds.CLUSTER_ROLES, status_only)
    await admin.create(
        kinds.CLUSTER_ROLE_BINDINGS,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "claim-status"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "claim-status",
            },
            "subjects": [
                {"kind": "User", "name": "writer", "apiGroup": "rbac.authorization.k8s.io"}
            ],
        },
    )
    # Authorization reads the index, which follows the store a moment later.
    registry = cluster.registry
    assert await registry.watch_cache.wait_until_fresh(registry.storage.revision, 5.0)
    writer = cluster.client(UserInfo("writer"))
    scheduler = cluster.client(UserInfo("system:kube-scheduler"))
    allocation = {
        "devices": {
            "results": [{"request": "r", "driver": DRIVER, "pool": "node-0", "device": "d0"}]
        }
    }

    no_binding = await _outcome(
        writer.update(
            kinds.RESOURCE_CLAIMS_V1,
            {**created, "status": {"allocation": allocation}},
            subresource="status",
        )
    )
    allocated = await scheduler.update(
        kinds.RESOURCE_CLAIMS_V1,
        {**created, "status": {"allocation": allocation}},
        subresource="status",
    )
    devices = [{"driver": DRIVER, "pool": "node-0", "device": "d0"}]
    no_driver = await _outcome(
        writer.update(
            kinds.RESOURCE_CLAIMS_V1,
            {**allocated, "status": {**allocated["status"], "devices": devices}},
            subresource="status",
        )
    )
    as_admin = await _outcome(
        admin.update(
            kinds.RESOURCE_CLAIMS_V1,
            {**allocated, "status": {**allocated["status"], "devices": devices}},
            subresource="status",
        )
    )

    # The synthetic subresources' refusals are Forbidden causes of a 422 (status validation).
    assert (no_binding, no_driver, as_admin) == (422, 422, 200)
