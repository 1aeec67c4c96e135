"""The registry's verbs through LocalClient: create/get/list/update/patch/delete semantics."""

from __future__ import annotations

import asyncio

import pytest

from draplane.api import errors, kinds
from draplane.api.auth import node_user
from draplane.testing.builders import make_claim, make_node, make_pod, make_template
from draplane.testing.cluster import Cluster


async def test_default_namespaces_exist(cluster: Cluster) -> None:
    names = [
        n["metadata"]["name"] for n in (await cluster.client().list(kinds.NAMESPACES))["items"]
    ]
    assert {"default", "kube-system", "kube-node-lease"} <= set(names)


async def test_create_sets_server_fields_and_defaults(cluster: Cluster) -> None:
    client = cluster.client()
    pod = await client.create(kinds.PODS, make_pod("p1").obj(), "default")
    md = pod["metadata"]
    assert md["uid"] and md["uid"] != make_pod("p1").obj()["metadata"]["uid"]
    assert md["creationTimestamp"].endswith("Z")
    assert md["generation"] == 1
    assert int(md["resourceVersion"]) > 0
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert (await client.get(kinds.PODS, "p1", "default")) == pod


async def test_create_existing_name_is_already_exists(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p1").obj(), "default")
    with pytest.raises(errors.StatusError) as err:
        await client.create(kinds.PODS, make_pod("p1").obj(), "default")
    assert (err.value.code, err.value.reason) == (409, "AlreadyExists")
    assert err.value.message == 'pods "p1" already exists'


async def test_generate_name(cluster: Cluster) -> None:
    claim = make_claim().generate_name("pod-gpu-").obj()
    created = await cluster.client().create(kinds.RESOURCE_CLAIMS, claim, "default")
    name = created["metadata"]["name"]
    assert name.startswith("pod-gpu-") and len(name) == len("pod-gpu-") + 5
    assert created["spec"]["allocationMode"] == "WaitForFirstConsumer"


@pytest.mark.parametrize(
    ("namespace", "code", "reason"),
    [
        pytest.param("missing", 404, "NotFound", id="missing-namespace"),
    ],
)
async def test_create_in_bad_namespace(
    cluster: Cluster, namespace: str, code: int, reason: str
) -> None:
    with pytest.raises(errors.StatusError) as err:
        await cluster.client().create(kinds.PODS, make_pod("p", namespace).obj(), namespace)
    assert (err.value.code, err.value.reason) == (code, reason)


async def test_create_invalid_is_422_with_causes(cluster: Cluster) -> None:
    pod = make_pod("p1").claim_no_source("gpu").obj()
    with pytest.raises(errors.StatusError) as err:
        await cluster.client().create(kinds.PODS, pod, "default")
    assert err.value.code == 422 and err.value.reason == "Invalid"
    fields = [c["field"] for c in err.value.details["causes"]]
    assert any(f.startswith("spec.resourceClaims[0]") for f in fields)
    assert (await cluster.client().list(kinds.PODS, "default"))["items"] == []


async def test_update_conflict_on_stale_resource_version(cluster: Cluster) -> None:
    client = cluster.client()
    claim = await client.create(kinds.RESOURCE_CLAIMS, make_claim("c").obj(), "default")
    first = dict(claim, metadata={**claim["metadata"], "labels": {"a": "1"}})
    await client.update(kinds.RESOURCE_CLAIMS, first)
    stale = dict(claim, metadata={**claim["metadata"], "labels": {"a": "2"}})
    with pytest.raises(errors.StatusError) as err:
        await client.update(kinds.RESOURCE_CLAIMS, stale)
    assert (err.value.code, err.value.reason) == (409, "Conflict")
    current = await client.get(kinds.RESOURCE_CLAIMS, "c", "default")
    assert current["metadata"]["labels"] == {"a": "1"}


async def test_main_update_ignores_status_and_status_update_ignores_spec(cluster: Cluster) -> None:
    client = cluster.client()
    claim = await client.create(kinds.RESOURCE_CLAIMS, make_claim("c").obj(), "default")
    allocated = make_claim("c").allocation(node="node-0").obj()
    with_status = dict(claim, status=allocated["status"])
    updated = await client.update(kinds.RESOURCE_CLAIMS, with_status)
    assert updated["status"] == {}
    status_write = dict(
        claim, status=allocated["status"], metadata={**claim["metadata"], "labels": {"x": "y"}}
    )
    updated = await client.update(kinds.RESOURCE_CLAIMS, status_write, subresource="status")
    assert updated["status"]["driverName"] == "driver.example.com"
    assert "labels" not in updated["metadata"]


async def test_noop_update_writes_nothing(cluster: Cluster) -> None:
    client = cluster.client()
    claim = await client.create(kinds.RESOURCE_CLAIMS, make_claim("c").obj(), "default")
    again = await client.update(kinds.RESOURCE_CLAIMS, claim)
    assert again["metadata"]["resourceVersion"] == claim["metadata"]["resourceVersion"]
    assert cluster.storage.revision == int(claim["metadata"]["resourceVersion"])


async def test_immutable_claim_spec(cluster: Cluster) -> None:
    client = cluster.client()
    claim = await client.create(kinds.RESOURCE_CLAIMS, make_claim("c").obj(), "default")
    changed = dict(claim, spec={**claim["spec"], "resourceClassName": "other"})
    with pytest.raises(errors.StatusError) as err:
        await client.update(kinds.RESOURCE_CLAIMS, changed)
    assert err.value.code == 422


@pytest.mark.parametrize(
    ("patch_type", "patch", "expected_labels"),
    [
        pytest.param(
            "merge", {"metadata": {"labels": {"b": "2"}}}, {"a": "1", "b": "2"}, id="merge"
        ),
        pytest.param("strategic", {"metadata": {"labels": {"a": None}}}, None, id="strategic"),
        pytest.param(
            "json",
            [{"op": "add", "path": "/metadata/labels/c", "value": "3"}],
            {"a": "1", "c": "3"},
            id="json",
        ),
    ],
)
async def test_patch_types(
    cluster: Cluster, patch_type: str, patch: object, expected_labels: dict[str, str] | None
) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p").label("a", "1").obj(), "default")
    patched = await client.patch(kinds.PODS, "p", patch, "default", patch_type=patch_type)  # type: ignore[arg-type]
    assert patched["metadata"].get("labels") in (
        expected_labels,
        {} if expected_labels is None else expected_labels,
    )


async def test_patch_missing_object_is_404(cluster: Cluster) -> None:
    with pytest.raises(errors.StatusError) as err:
        await cluster.client().patch(kinds.PODS, "nope", {"metadata": {}}, "default")
    assert err.value.code == 404


async def test_json_patch_test_failure_is_422(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p").obj(), "default")
    with pytest.raises(errors.StatusError) as err:
        await client.patch(
            kinds.PODS,
            "p",
            [{"op": "test", "path": "/metadata/name", "value": "other"}],
            "default",
            patch_type="json",
        )
    assert err.value.code == 422


async def test_status_patch_records_claim_statuses(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p").claim_template("gpu", "t").obj(), "default")
    patched = await client.patch(
        kinds.PODS,
        "p",
        {
            "status": {
                "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}]
            }
        },
        "default",
        patch_type="strategic",
        subresource="status",
    )
    assert patched["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": "p-gpu-abcde"}
    ]
    assert patched["status"]["phase"] == "Pending"


async def test_binding_sets_node_and_condition_once(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p").obj(), "default")
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "node-1"},
    }
    result = await client.create(kinds.PODS, binding, "default", subresource="binding", name="p")
    assert result["status"] == "Success"
    pod = await client.get(kinds.PODS, "p", "default")
    assert pod["spec"]["nodeName"] == "node-1"
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled"]
    with pytest.raises(errors.StatusError) as err:
        await client.create(kinds.PODS, binding, "default", subresource="binding", name="p")
    assert err.value.code == 409 and "already assigned" in err.value.message


async def test_delete_with_finalizer_waits_for_removal(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(
        kinds.RESOURCE_CLAIMS,
        make_claim("c").finalizer("driver.example.com/deletion-protection").obj(),
        "default",
    )
    pending = await client.delete(kinds.RESOURCE_CLAIMS, "c", "default")
    assert pending["metadata"]["deletionTimestamp"]
    current = await client.get(kinds.RESOURCE_CLAIMS, "c", "default")
    with pytest.raises(errors.StatusError) as err:
        await client.update(
            kinds.RESOURCE_CLAIMS,
            dict(
                current,
                metadata={
                    **current["metadata"],
                    "finalizers": ["a", "driver.example.com/deletion-protection"],
                },
            ),
        )
    assert err.value.code == 422
    await client.update(
        kinds.RESOURCE_CLAIMS, dict(current, metadata={**current["metadata"], "finalizers": []})
    )
    with pytest.raises(errors.StatusError) as err:
        await client.get(kinds.RESOURCE_CLAIMS, "c", "default")
    assert err.value.code == 404


async def test_delete_preconditions(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p").obj(), "default")
    with pytest.raises(errors.StatusError) as err:
        await client.delete(kinds.PODS, "p", "default", preconditions={"uid": "other"})
    assert err.value.code == 409
    deleted = await client.delete(kinds.PODS, "p", "default")
    assert deleted["metadata"]["name"] == "p"


async def test_scheduled_pod_deletes_gracefully(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p").node("node-0").obj(), "default")
    pending = await client.delete(kinds.PODS, "p", "default")
    assert pending["metadata"]["deletionGracePeriodSeconds"] == 30
    gone = await client.delete(kinds.PODS, "p", "default", grace_period_seconds=0)
    assert gone["metadata"]["name"] == "p"
    assert (await client.list(kinds.PODS, "default"))["items"] == []


@pytest.mark.parametrize(
    ("policy", "finalizer"),
    [
        pytest.param("Orphan", "orphan", id="orphan"),
        pytest.param("Foreground", "foregroundDeletion", id="foreground"),
    ],
)
async def test_propagation_policy_finalizers(cluster: Cluster, policy: str, finalizer: str) -> None:
    client = cluster.client()
    await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "cm"}, "data": {}}, "default")
    pending = await client.delete(kinds.CONFIGMAPS, "cm", "default", propagation_policy=policy)
    assert pending["metadata"]["finalizers"] == [finalizer]


async def test_list_selectors_and_pagination(cluster: Cluster) -> None:
    client = cluster.client()
    for i in range(5):
        pod = make_pod(f"p{i}").label("app", "a" if i % 2 else "b")
        if i < 2:
            pod = pod.node("node-0")
        await client.create(kinds.PODS, pod.obj(), "default")
    names = [
        p["metadata"]["name"]
        for p in (await client.list(kinds.PODS, "default", label_selector="app=a"))["items"]
    ]
    assert names == ["p1", "p3"]
    names = [
        p["metadata"]["name"]
        for p in (await client.list(kinds.PODS, "", field_selector="spec.nodeName=node-0"))["items"]
    ]
    assert names == ["p0", "p1"]
    first = await client.list(kinds.PODS, "default", limit=2)
    assert [p["metadata"]["name"] for p in first["items"]] == ["p0", "p1"]
    assert first["metadata"]["remainingItemCount"] == 3
    rest = await client.list(
        kinds.PODS, "default", limit=10, continue_=first["metadata"]["continue"]
    )
    assert [p["metadata"]["name"] for p in rest["items"]] == ["p2", "p3", "p4"]
    with pytest.raises(errors.StatusError) as err:
        await client.list(kinds.PODS, "default", field_selector="spec.bogus=1")
    assert err.value.code == 400


async def test_watch_from_now_and_from_revision(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("a").obj(), "default")
    stream = await client.watch(kinds.PODS, "default")
    listing = await client.list(kinds.PODS, "default")
    await client.create(kinds.PODS, make_pod("b").obj(), "default")
    events = []
    async for ev in stream:
        events.append((ev.type, ev.object["metadata"]["name"]))
        if len(events) == 2:
            break
    await stream.close()
    assert events == [("ADDED", "a"), ("ADDED", "b")]
    stream = await client.watch(
        kinds.PODS, "default", resource_version=listing["metadata"]["resourceVersion"]
    )
    first = await asyncio.wait_for(stream.__aiter__().__anext__(), 5)
    await stream.close()
    assert (first.type, first.object["metadata"]["name"]) == ("ADDED", "b")


async def test_watch_label_transition_is_delete(cluster: Cluster) -> None:
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("a").label("app", "x").obj(), "default")
    stream = await client.watch(kinds.PODS, "default", label_selector="app=x")
    it = stream.__aiter__()
    assert (await asyncio.wait_for(it.__anext__(), 5)).type == "ADDED"
    await client.patch(kinds.PODS, "a", {"metadata": {"labels": {"app": "y"}}}, "default")
    event = await asyncio.wait_for(it.__anext__(), 5)
    await stream.close()
    assert event.type == "DELETED"


async def test_node_restrictions(cluster: Cluster) -> None:
    admin = cluster.client()
    node = cluster.client(node_user("node-0"))
    await admin.create(kinds.NODES, make_node("node-1").obj())
    with pytest.raises(errors.StatusError) as err:
        await node.patch(kinds.NODES, "node-1", {"metadata": {"labels": {"a": "b"}}})
    assert err.value.code == 403
    await admin.create(kinds.RESOURCE_CLAIM_TEMPLATES, make_template("t").obj(), "default")
    pod = make_pod("p").claim_template("gpu", "t").node("node-0").obj()
    await admin.create(kinds.PODS, pod, "default")
    await admin.create(kinds.RESOURCE_CLAIMS, make_claim("p-gpu-x").obj(), "default")
    await admin.create(kinds.RESOURCE_CLAIMS, make_claim("other").obj(), "default")
    with pytest.raises(errors.StatusError) as err:
        await node.get(kinds.RESOURCE_CLAIMS, "p-gpu-x", "default")
    assert err.value.code == 403
    await admin.patch(
        kinds.PODS,
        "p",
        {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]}},
        "default",
        subresource="status",
    )
    assert (await node.get(kinds.RESOURCE_CLAIMS, "p-gpu-x", "default"))["metadata"]["name"]
    with pytest.raises(errors.StatusError) as err:
        await node.get(kinds.RESOURCE_CLAIMS, "other", "default")
    assert err.value.code == 403
    with pytest.raises(errors.StatusError) as err:
        await node.patch(
            kinds.PODS,
            "p",
            {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "other"}]}},
            "default",
            subresource="status",
        )
    assert err.value.code == 403
    await node.patch(
        kinds.PODS, "p", {"status": {"phase": "Running"}}, "default", subresource="status"
    )
    assert (await admin.get(kinds.PODS, "p", "default"))["status"]["phase"] == "Running"


async def test_node_indexed_pod_watch_sees_binding_and_nothing_else(cluster: Cluster) -> None:
    """Watches selecting spec.nodeName (one per kubelet) are indexed by node; a pod bound to
    node-0 appears (ADDED) only to node-0's watcher, then changes and leaves as usual."""
    client = cluster.client()
    await client.create(kinds.PODS, make_pod("p").obj(), "default")
    mine = await client.watch(kinds.PODS, "", field_selector="spec.nodeName=node-0")
    other = await client.watch(kinds.PODS, "", field_selector="spec.nodeName=node-1")
    everyone = await client.watch(kinds.PODS, "")
    binding = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "node-0"}}
    await client.create(kinds.PODS, binding, "default", subresource="binding", name="p")
    await client.patch(kinds.PODS, "p", {"metadata": {"labels": {"a": "b"}}}, "default")
    await client.delete(kinds.PODS, "p", "default", grace_period_seconds=0)
    seen = []
    async for event in mine:
        seen.append(event.type)
        if event.type == "DELETED":
            break
    assert seen == ["ADDED", "MODIFIED", "DELETED"]
    all_types = []
    async for event in everyone:
        all_types.append(event.type)
        if event.type == "DELETED":
            break
    assert all_types == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    await other.close()
    assert [e async for e in other] == []
    await mine.close()
    await everyone.close()
