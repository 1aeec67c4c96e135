"""Strategic merge patch: metadata lists, map directives, and the tables of the other kinds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.api.patch import apply_strategic_merge_patch
from draplane.api.schema import schemas_for
from draplane.testing.builders import (
    make_claim,
    make_node,
    make_pod,
    make_scheduling_context,
    make_template,
)

MISSING = object()

app_container = {"name": "app", "image": "app:1"}
sidecar = {"name": "sidecar", "image": "side:1"}
rich_pod = (
    make_pod("web")
    .uid("pod-uid")
    .finalizer("a")
    .owner("ReplicaSet", "rs", "rs-uid")
    .label("app", "web")
    .set("metadata.managedFields", [{"manager": "kubectl", "operation": "Update"}])
    .set("spec.containers", [app_container, sidecar])
    .set("spec.nodeSelector", {"zone": "a"})
    .obj()
)
three_finalizers = make_pod("fin").finalizer("a").finalizer("b").finalizer("c").obj()
node = (
    make_node("n1")
    .taint("k", "NoSchedule")
    .set("spec.podCIDRs", ["10.0.0.0/24"])
    .set("status.conditions", [{"type": "Ready", "status": "True"}])
    .set(
        "status.addresses",
        [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "n1"}],
    )
    .set("status.images", [{"names": ["a"]}])
    .obj()
)
namespace = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "ns"},
    "spec": {"finalizers": ["kubernetes"]},
    "status": {"phase": "Active", "conditions": [{"type": "A", "status": "False"}]},
}
pod_a = make_pod("a").uid("uid-a").obj()
pod_b = make_pod("b").uid("uid-b").obj()
reserved_claim = make_claim("c").reserved_for(pod_a, pod_b).obj()
scheduling_context = (
    make_scheduling_context(pod_a)
    .potential_nodes("n1", "n2")
    .unsuitable_nodes("gpu", "n1")
    .unsuitable_nodes("fpga", "n2")
    .obj()
)
template = make_template("t").set("spec.metadata", {"finalizers": ["x"]}).obj()
configmap = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cm", "namespace": "default"},
    "data": {"a": "1", "b": "2"},
}


@dataclass(frozen=True)
class Case:
    original: Obj
    patch: Obj
    path: tuple[str | int, ...]
    expected: Any
    rt: ResourceType = kinds.PODS


def at(obj: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        if isinstance(obj, dict) and part not in obj:
            return MISSING
        obj = obj[part]
    return obj


CASES = [
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"finalizers": ["b", "a"]}},
            ("metadata", "finalizers"),
            ["b", "a"],
        ),
        id="finalizers-set-union-patch-order",
    ),
    pytest.param(
        Case(
            three_finalizers,
            {"metadata": {"finalizers": ["d"]}},
            ("metadata", "finalizers"),
            ["d", "a", "b", "c"],
        ),
        id="finalizers-add-without-order-goes-first",
    ),
    pytest.param(
        Case(
            three_finalizers,
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "c"]}},
            ("metadata", "finalizers"),
            ["a"],
        ),
        id="delete-from-primitive-list",
    ),
    pytest.param(
        Case(
            three_finalizers,
            {"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}},
            ("metadata", "finalizers"),
            ["c", "a", "b"],
        ),
        id="set-element-order-primitives",
    ),
    pytest.param(
        Case(
            three_finalizers,
            {
                "metadata": {
                    "$setElementOrder/finalizers": ["a", "b", "c", "d"],
                    "finalizers": ["d"],
                }
            },
            ("metadata", "finalizers"),
            ["a", "b", "c", "d"],
        ),
        id="kubectl-style-append-finalizer",
    ),
    pytest.param(
        Case(
            three_finalizers,
            {
                "metadata": {
                    "$setElementOrder/finalizers": ["a", "c"],
                    "$deleteFromPrimitiveList/finalizers": ["b"],
                }
            },
            ("metadata", "finalizers"),
            ["a", "c"],
        ),
        id="kubectl-style-remove-finalizer",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"ownerReferences": [{"uid": "rs-uid", "blockOwnerDeletion": True}]}},
            ("metadata", "ownerReferences"),
            [
                {
                    "apiVersion": "v1",
                    "kind": "ReplicaSet",
                    "name": "rs",
                    "uid": "rs-uid",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        id="owner-references-by-uid",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "rs-uid"}]}},
            ("metadata", "ownerReferences"),
            [],
        ),
        id="owner-references-delete-by-uid",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"managedFields": [{"manager": "b"}]}},
            ("metadata", "managedFields"),
            [{"manager": "b"}],
        ),
        id="managed-fields-replace",
    ),
    # maps and map directives
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"labels": {"$patch": "replace", "x": "y"}}},
            ("metadata", "labels"),
            {"x": "y"},
        ),
        id="map-patch-replace",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"labels": {"$patch": "delete"}}},
            ("metadata", "labels"),
            MISSING,
        ),
        id="map-patch-delete",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"labels": {"$patch": "merge", "x": "y"}}},
            ("metadata", "labels"),
            {"app": "web", "x": "y"},
        ),
        id="map-patch-merge-is-the-default",
    ),
    pytest.param(
        Case(rich_pod, {"spec": {"nodeSelector": None}}, ("spec", "nodeSelector"), MISSING),
        id="null-deletes-key",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"nodeSelector": {"zone": None, "disk": "ssd"}}},
            ("spec", "nodeSelector"),
            {"disk": "ssd"},
        ),
        id="null-deletes-map-entry",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"$retainKeys": ["containers"], "containers": []}},
            ("spec",),
            {"containers": [app_container, sidecar]},
        ),
        id="retain-keys-clears-other-fields",
    ),
    pytest.param(
        Case(
            rich_pod,
            {
                "spec": {
                    "$patch": "replace",
                    "containers": [
                        {"name": "x", "image": "x"},
                        {"$patch": "delete", "name": "app"},
                    ],
                }
            },
            ("spec",),
            {"containers": [{"name": "x", "image": "x"}]},
        ),
        id="replace-map-ignores-nested-directives",
    ),
    pytest.param(
        Case(
            make_pod().obj(),
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"$patch": "delete", "type": "Gone"},
                    ]
                }
            },
            ("status", "conditions"),
            [{"type": "Ready", "status": "True"}],
        ),
        id="new-list-has-directives-stripped",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"metadata": {"labels": ["not", "a", "map"]}},
            ("metadata", "labels"),
            ["not", "a", "map"],
        ),
        id="type-change-takes-patch",
    ),
    # Node
    pytest.param(
        Case(
            node,
            {"spec": {"podCIDRs": ["fd00::/64", "10.0.0.0/24"]}},
            ("spec", "podCIDRs"),
            ["fd00::/64", "10.0.0.0/24"],
            kinds.NODES,
        ),
        id="node-pod-cidrs-merge-set",
    ),
    pytest.param(
        Case(
            node,
            {"spec": {"taints": [{"key": "k2", "effect": "NoExecute"}]}},
            ("spec", "taints"),
            [{"key": "k2", "effect": "NoExecute"}],
            kinds.NODES,
        ),
        id="node-taints-atomic",
    ),
    pytest.param(
        Case(
            node,
            {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
            ("status", "conditions"),
            [{"type": "Ready", "status": "False"}],
            kinds.NODES,
        ),
        id="node-conditions-by-type",
    ),
    pytest.param(
        Case(
            node,
            {"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}},
            ("status", "addresses"),
            [{"type": "InternalIP", "address": "10.0.0.2"}, {"type": "Hostname", "address": "n1"}],
            kinds.NODES,
        ),
        id="node-addresses-by-type",
    ),
    pytest.param(
        Case(
            node,
            {"status": {"images": [{"names": ["b"]}]}},
            ("status", "images"),
            [{"names": ["b"]}],
            kinds.NODES,
        ),
        id="node-images-atomic",
    ),
    # Namespace
    pytest.param(
        Case(
            namespace,
            {"spec": {"finalizers": ["other"]}},
            ("spec", "finalizers"),
            ["other"],
            kinds.NAMESPACES,
        ),
        id="namespace-spec-finalizers-atomic",
    ),
    pytest.param(
        Case(
            namespace,
            {"status": {"conditions": [{"type": "B", "status": "True"}]}},
            ("status", "conditions"),
            [{"type": "B", "status": "True"}, {"type": "A", "status": "False"}],
            kinds.NAMESPACES,
        ),
        id="namespace-conditions-by-type",
    ),
    # resource.k8s.io/v1alpha2: lists are atomic in SMP (1.28).
    pytest.param(
        Case(
            reserved_claim,
            {"status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "uid-a"}]}},
            ("status", "reservedFor"),
            [{"resource": "pods", "name": "a", "uid": "uid-a"}],
            kinds.RESOURCE_CLAIMS,
        ),
        id="claim-reserved-for-atomic",
    ),
    pytest.param(
        Case(
            reserved_claim,
            {"status": {"driverName": "d"}},
            ("status", "reservedFor", 1, "uid"),
            "uid-b",
            kinds.RESOURCE_CLAIMS,
        ),
        id="claim-status-map-merges",
    ),
    pytest.param(
        Case(
            scheduling_context,
            {"status": {"resourceClaims": [{"name": "gpu", "unsuitableNodes": []}]}},
            ("status", "resourceClaims"),
            [{"name": "gpu", "unsuitableNodes": []}],
            kinds.POD_SCHEDULING_CONTEXTS,
        ),
        id="scheduling-context-resource-claims-atomic",
    ),
    pytest.param(
        Case(
            scheduling_context,
            {"spec": {"potentialNodes": ["n3"], "selectedNode": "n3"}},
            ("spec",),
            {"potentialNodes": ["n3"], "selectedNode": "n3"},
            kinds.POD_SCHEDULING_CONTEXTS,
        ),
        id="scheduling-context-potential-nodes-atomic",
    ),
    pytest.param(
        Case(
            template,
            {"spec": {"metadata": {"finalizers": ["y"]}}},
            ("spec", "metadata", "finalizers"),
            ["y", "x"],
            kinds.RESOURCE_CLAIM_TEMPLATES,
        ),
        id="template-embedded-metadata-finalizers",
    ),
    pytest.param(
        Case(
            configmap,
            {"data": {"a": None, "c": "3"}},
            ("data",),
            {"b": "2", "c": "3"},
            kinds.CONFIGMAPS,
        ),
        id="configmap-data-merges",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_strategic_merge_patch(case: Case) -> None:
    original = deep_copy(case.original)
    patch = deep_copy(case.patch)

    result = apply_strategic_merge_patch(case.original, case.patch, case.rt, schemas_for())

    assert at(result, case.path) == case.expected
    assert (case.original, case.patch) == (original, patch)


def test_top_level_patch_delete_empties_the_object() -> None:
    assert (
        apply_strategic_merge_patch(rich_pod, {"$patch": "delete"}, kinds.PODS, schemas_for()) == {}
    )
