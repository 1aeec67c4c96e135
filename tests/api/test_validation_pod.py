"""Pod validation: create (spec.resourceClaims, containers, resources), update and status."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from draplane.api import errors, kinds
from draplane.api.errors import FieldError
from draplane.api.meta import Obj
from draplane.testing import kindrules as validation
from draplane.testing.builders import PodBuilder, from_pod, make_pod


def _pod(b: PodBuilder) -> Obj:
    pod = b.obj()
    validation.default(kinds.PODS, pod)
    return pod


def _causes(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


REQ, INV, DUP, FORB = (
    "FieldValueRequired",
    "FieldValueInvalid",
    "FieldValueDuplicate",
    ("FieldValueForbidden"),
)
NOT_FOUND, NOT_SUP = "FieldValueNotFound", "FieldValueNotSupported"


@dataclass(frozen=True)
class Case:
    pod: Callable[[], PodBuilder]
    causes: list[tuple[str, str]] = field(default_factory=list)
    detail: str = ""


def _debug(b: PodBuilder, **fields: Any) -> PodBuilder:
    """`b` with one ephemeral container `debug` (as `kubectl debug` adds) with `fields`."""
    return b.set("spec.ephemeralContainers", [{"name": "debug", "image": "busybox:1", **fields}])


ON_CREATE = (FORB, "spec.ephemeralContainers")


CREATE_CASES = [
    pytest.param(Case(lambda: make_pod()), id="valid-minimal"),
    pytest.param(
        Case(lambda: make_pod().claim_template("gpu", "gpu-template").claim_ref("nic", "my-nic")),
        id="valid-claims",
    ),
    pytest.param(
        Case(
            lambda: make_pod().claim_template("", "t"),
            [(REQ, "spec.resourceClaims[0].name"), (REQ, "spec.containers[0].resources.claims[0]")],
        ),
        id="claim-name-required",
    ),
    pytest.param(
        Case(
            lambda: make_pod().claim_template("gpu", "t").claim_ref("gpu", "c"),
            [
                (DUP, "spec.resourceClaims[1].name"),
                (DUP, "spec.containers[0].resources.claims[1]"),
            ],
        ),
        id="claim-name-duplicate",
    ),
    pytest.param(
        Case(
            lambda: make_pod().claim_template("GPU_1", "t"),
            [(INV, "spec.resourceClaims[0].name")],
            "a lowercase RFC 1123 label",
        ),
        id="claim-name-not-label",
    ),
    pytest.param(
        Case(
            lambda: make_pod("p" * 250).claim_template("gpu", "t"),
        ),
        id="long-pod-name-with-template-claim-accepted",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set(
                "spec.resourceClaims",
                [
                    {
                        "name": "gpu",
                        "source": {"resourceClaimName": "a", "resourceClaimTemplateName": "b"},
                    }
                ],
            ),
            [(INV, "spec.resourceClaims[0].source")],
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
        ),
        id="source-both",
    ),
    pytest.param(
        Case(
            lambda: make_pod().claim_no_source("gpu"),
            [(INV, "spec.resourceClaims[0].source")],
            "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
        ),
        id="source-none",
    ),
    pytest.param(
        Case(
            lambda: make_pod().claim_ref("gpu", "Bad_Name"),
            [(INV, "spec.resourceClaims[0].source.resourceClaimName")],
        ),
        id="source-claim-name-invalid",
    ),
    pytest.param(
        Case(
            lambda: make_pod().claim_template("gpu", "-bad"),
            [(INV, "spec.resourceClaims[0].source.resourceClaimTemplateName")],
        ),
        id="source-template-name-invalid",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(resources={"claims": [{"name": "gpu"}]}),
            [(NOT_FOUND, "spec.containers[0].resources.claims[0]")],
            "must be one of the names in pod.spec.resourceClaims which is empty",
        ),
        id="container-claim-unknown-empty-list",
    ),
    pytest.param(
        Case(
            lambda: (
                make_pod()
                .claim_no_source("b")
                .claim_no_source("a")
                .container_fields(resources={"claims": [{"name": "c"}]})
            ),
            [
                (INV, "spec.resourceClaims[0].source"),
                (INV, "spec.resourceClaims[1].source"),
                (NOT_FOUND, "spec.containers[0].resources.claims[0]"),
            ],
            "must be one of the names in pod.spec.resourceClaims: a, b",
        ),
        id="container-claim-unknown-sorted-list",
    ),
    pytest.param(
        Case(
            lambda: (
                make_pod()
                .claim_ref("a", "c")
                .container_fields(
                    resources={"claims": [{"name": "a"}, {"name": "a"}, {"name": "a"}]}
                )
            ),
            [
                (DUP, "spec.containers[0].resources.claims[1]"),
                (DUP, "spec.containers[0].resources.claims[2]"),
            ],
        ),
        id="container-claim-duplicate",
    ),
    pytest.param(
        Case(lambda: make_pod().set("spec.containers", []), [(REQ, "spec.containers")]),
        id="containers-required",
    ),
    pytest.param(
        Case(lambda: make_pod().container_fields(name=""), [(REQ, "spec.containers[0].name")]),
        id="container-name-required",
    ),
    pytest.param(
        Case(lambda: make_pod().container_fields(name="Ctr"), [(INV, "spec.containers[0].name")]),
        id="container-name-not-label",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set("spec.initContainers", [{"name": "ctr", "image": "busybox:1"}]),
            [(DUP, "spec.initContainers[0].name")],
        ),
        id="container-name-duplicate-with-init",
    ),
    pytest.param(
        Case(lambda: make_pod().container_fields(image=""), [(REQ, "spec.containers[0].image")]),
        id="image-required",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(image=" busybox"),
            [(INV, "spec.containers[0].image")],
        ),
        id="image-whitespace",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(imagePullPolicy="Sometimes"),
            [(NOT_SUP, "spec.containers[0].imagePullPolicy")],
        ),
        id="pull-policy",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(terminationMessagePolicy="Nope"),
            [(INV, "spec.containers[0].terminationMessagePolicy")],
        ),
        id="termination-message-policy",
    ),
    pytest.param(
        Case(
            lambda: make_pod().requests(cpu="lots"),
            [(INV, "spec.containers[0].resources.requests[cpu]")],
            "quantities must match the regular expression",
        ),
        id="request-not-quantity",
    ),
    pytest.param(
        Case(
            lambda: make_pod().requests(memory="-1Gi"),
            [(INV, "spec.containers[0].resources.requests[memory]")],
            "must be greater than or equal to 0",
        ),
        id="request-negative",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(
                resources={"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}
            ),
            [(INV, "spec.containers[0].resources.requests")],
            "must be less than or equal to cpu limit of 1",
        ),
        id="request-above-limit",
    ),
    pytest.param(
        Case(
            lambda: make_pod().requests(**{"example.com/gpu": "1"}),
            [(REQ, "spec.containers[0].resources.limits")],
        ),
        id="extended-resource-needs-limit",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(resources={"limits": {"example.com/gpu": "500m"}}),
            [
                (INV, "spec.containers[0].resources.limits[example.com/gpu]"),
                (INV, "spec.containers[0].resources.requests[example.com/gpu]"),
            ],
            "must be an integer",
        ),
        id="extended-resource-integer",
    ),
    pytest.param(
        Case(
            lambda: make_pod().requests(gpu="1"),
            [(INV, "spec.containers[0].resources.requests[gpu]")],
            "must be a standard resource for containers",
        ),
        id="non-standard-resource",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(
                ports=[{"containerPort": 70000}, {"containerPort": 80, "protocol": "XTP"}]
            ),
            [
                (INV, "spec.containers[0].ports[0].containerPort"),
                (NOT_SUP, "spec.containers[0].ports[1].protocol"),
            ],
        ),
        id="ports",
    ),
    pytest.param(
        Case(
            lambda: make_pod().container_fields(
                env=[{"name": ""}, {"name": "1ABC"}, {"name": "OK_1", "value": "x"}]
            ),
            [(REQ, "spec.containers[0].env[0].name"), (INV, "spec.containers[0].env[1].name")],
        ),
        id="env-names",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set("spec.restartPolicy", "Sometimes"),
            [(NOT_SUP, "spec.restartPolicy")],
        ),
        id="restart-policy",
    ),
    pytest.param(
        Case(lambda: make_pod().set("spec.dnsPolicy", "Magic"), [(NOT_SUP, "spec.dnsPolicy")]),
        id="dns-policy",
    ),
    pytest.param(Case(lambda: make_pod().node("Node_1"), [(INV, "spec.nodeName")]), id="node-name"),
    pytest.param(
        Case(lambda: make_pod().node_selector({"a/b/c": "x"}), [(INV, "spec.nodeSelector")]),
        id="node-selector-key",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set("spec.activeDeadlineSeconds", 0),
            [(INV, "spec.activeDeadlineSeconds")],
            "must be between 1 and 2147483647, inclusive",
        ),
        id="active-deadline",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set(
                "spec.tolerations",
                [
                    {"operator": "Equal", "value": "x"},
                    {"key": "k", "operator": "Maybe"},
                    {"key": "k", "effect": "NoWay"},
                    {"key": "k", "tolerationSeconds": 5},
                ],
            ),
            [
                (INV, "spec.tolerations[0].operator"),
                (NOT_SUP, "spec.tolerations[1].operator"),
                (NOT_SUP, "spec.tolerations[2].effect"),
                (INV, "spec.tolerations[3].effect"),
            ],
        ),
        id="tolerations",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set(
                "spec.affinity",
                {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "a", "operator": "In"}]}
                            ]
                        }
                    }
                },
            ),
            [
                (
                    REQ,
                    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                    ".nodeSelectorTerms[0].matchExpressions[0].values",
                )
            ],
        ),
        id="node-affinity",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set("spec.schedulingGates", [{"name": "a"}, {"name": "a"}]),
            [(DUP, "spec.schedulingGates[1]")],
        ),
        id="scheduling-gates-duplicate",
    ),
    pytest.param(
        Case(
            lambda: make_pod().node("n").set("spec.schedulingGates", [{"name": "a"}]),
            [(FORB, "spec.nodeName")],
        ),
        id="gated-pod-with-node",
    ),
    pytest.param(
        Case(lambda: _debug(make_pod()), [ON_CREATE], "cannot be set on create"),
        id="ephemeral-containers-on-create",
    ),
    pytest.param(
        Case(
            lambda: _debug(
                make_pod().claim_template("gpu", "t"), resources={"claims": [{"name": "gpu"}]}
            ),
            [(FORB, "spec.ephemeralContainers[0].resources"), ON_CREATE],
            "cannot be set for an Ephemeral Container",
        ),
        id="ephemeral-container-claim",
    ),
    pytest.param(
        Case(
            lambda: _debug(make_pod(), resources={"claims": [{"name": "gpu"}]}),
            [
                (NOT_FOUND, "spec.ephemeralContainers[0].resources.claims[0]"),
                (FORB, "spec.ephemeralContainers[0].resources"),
                ON_CREATE,
            ],
        ),
        id="ephemeral-container-unknown-claim",
    ),
    pytest.param(
        Case(lambda: _debug(make_pod(), resources={}), [ON_CREATE]),
        id="ephemeral-container-empty-resources",
    ),
    pytest.param(
        Case(
            lambda: _debug(
                make_pod(),
                ports=[{"containerPort": 80}],
                restartPolicy="Always",
                livenessProbe={"exec": {"command": ["true"]}},
                lifecycle={},
            ),
            [
                (FORB, "spec.ephemeralContainers[0].ports"),
                (FORB, "spec.ephemeralContainers[0].restartPolicy"),
                (FORB, "spec.ephemeralContainers[0].livenessProbe"),
                (FORB, "spec.ephemeralContainers[0].lifecycle"),
                ON_CREATE,
            ],
        ),
        id="ephemeral-container-forbidden-fields",
    ),
    pytest.param(
        Case(
            lambda: _debug(
                make_pod(),
                name="ctr",
                targetContainerName="nope",
                volumeMounts=[{"name": "v", "mountPath": "/v", "subPath": "x"}],
            ),
            [
                (DUP, "spec.ephemeralContainers[0].name"),
                (NOT_FOUND, "spec.ephemeralContainers[0].targetContainerName"),
                (FORB, "spec.ephemeralContainers[0].volumeMounts[0].subPath"),
                ON_CREATE,
            ],
        ),
        id="ephemeral-container-name-target-subpath",
    ),
    pytest.param(
        Case(
            lambda: _debug(make_pod(), image="", imagePullPolicy="Sometimes"),
            [
                (REQ, "spec.ephemeralContainers[0].image"),
                (NOT_SUP, "spec.ephemeralContainers[0].imagePullPolicy"),
                ON_CREATE,
            ],
        ),
        id="ephemeral-container-common-rules",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set("spec.containers", "x"),
            [("FieldValueTypeInvalid", "spec.containers")],
        ),
        id="containers-wrong-type",
    ),
    pytest.param(
        Case(
            lambda: make_pod().set("spec.resourceClaims", [5]),
            # The type check comes first and alone, as decoding does upstream.
            [("FieldValueTypeInvalid", "spec.resourceClaims[0]")],
        ),
        id="claims-wrong-item-type",
    ),
]


@pytest.mark.parametrize("case", CREATE_CASES)
def test_validate_pod_create(case: Case) -> None:
    errs = validation.validate_create(kinds.PODS, _pod(case.pod()))
    assert _causes(errs) == case.causes
    if case.detail:
        assert any(case.detail in e.detail for e in errs), [e.detail for e in errs]


def test_invalid_pod_name_is_reported_at_metadata_name() -> None:
    errs = validation.validate_create(kinds.PODS, _pod(make_pod(".dot.com")))
    assert _causes(errs) == [(INV, "metadata.name")]


_OLD = _pod(
    make_pod()
    .claim_template("gpu", "t")
    .set(
        "spec.tolerations",
        [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
    )
    .set("spec.schedulingGates", [{"name": "x"}, {"name": "y"}])
    .resource_version("5")
)


def _update(change: Callable[[Obj], None]) -> list[FieldError]:
    new = from_pod(_OLD).obj()
    change(new)
    validation.default(kinds.PODS, new)
    return validation.validate_update(kinds.PODS, new, _OLD)


def _set_spec(key: str, value: Any) -> Callable[[Obj], None]:
    return lambda pod: pod["spec"].__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "causes"),
    [
        pytest.param(lambda pod: None, [], id="no-change"),
        pytest.param(
            lambda pod: pod["metadata"].__setitem__("labels", {"a": "b"}), [], id="labels"
        ),
        pytest.param(
            lambda pod: pod["spec"]["containers"][0].__setitem__("image", "busybox:2"),
            [],
            id="image",
        ),
        pytest.param(_set_spec("activeDeadlineSeconds", 10), [], id="deadline-added"),
        pytest.param(
            _set_spec(
                "tolerations",
                [*_OLD["spec"]["tolerations"], {"key": "b", "operator": "Exists"}],
            ),
            [],
            id="toleration-added",
        ),
        pytest.param(
            _set_spec(
                "tolerations",
                [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
            ),
            [],
            id="toleration-seconds-changed",
        ),
        pytest.param(
            _set_spec("tolerations", []),
            [(FORB, "spec.tolerations")],
            id="toleration-removed",
        ),
        pytest.param(_set_spec("schedulingGates", [{"name": "y"}]), [], id="gate-removed"),
        pytest.param(
            _set_spec("schedulingGates", [{"name": "x"}, {"name": "y"}, {"name": "z"}]),
            [(FORB, "spec.schedulingGates[2].name")],
            id="gate-added",
        ),
        pytest.param(_set_spec("nodeName", "node-1"), [(FORB, "spec")], id="node-name"),
        pytest.param(
            _set_spec("resourceClaims", []),
            [(NOT_FOUND, "spec.containers[0].resources.claims[0]"), (FORB, "spec")],
            id="claims-removed",
        ),
        pytest.param(
            lambda pod: pod["spec"]["containers"].append({"name": "b", "image": "x"}),
            [(FORB, "spec.containers")],
            id="container-added",
        ),
        pytest.param(
            lambda pod: pod["metadata"].__setitem__("name", "other"),
            [(INV, "metadata.name")],
            id="name-immutable",
        ),
        pytest.param(
            lambda pod: pod["metadata"].__setitem__("uid", "other"),
            [(INV, "metadata.uid")],
            id="uid-immutable",
        ),
        pytest.param(lambda pod: pod["metadata"].pop("uid"), [], id="uid-omitted-is-fine"),
        pytest.param(
            lambda pod: pod["spec"].pop("enableServiceLinks"), [], id="defaulted-field-omitted"
        ),
        pytest.param(
            lambda pod: pod["spec"].__setitem__("volumes", []), [], id="empty-list-equals-absent"
        ),
    ],
)
def test_validate_pod_update(change: Callable[[Obj], None], causes: list[tuple[str, str]]) -> None:
    assert _causes(_update(change)) == causes


def test_pod_spec_change_message_names_updatable_fields() -> None:
    errs = _update(_set_spec("nodeName", "node-1"))
    assert errs[0].detail.startswith(
        "pod updates may not change fields other than `spec.containers[*].image`"
    )
    assert "spec.nodeName" in errs[0].detail


def test_active_deadline_may_only_decrease() -> None:
    old = _pod(make_pod().set("spec.activeDeadlineSeconds", 10))
    raised = from_pod(old).set("spec.activeDeadlineSeconds", 20).obj()
    lowered = from_pod(old).set("spec.activeDeadlineSeconds", 5).obj()
    cleared = from_pod(old).obj()
    del cleared["spec"]["activeDeadlineSeconds"]
    assert _causes(validation.validate_update(kinds.PODS, raised, old)) == [
        (INV, "spec.activeDeadlineSeconds")
    ]
    assert validation.validate_update(kinds.PODS, lowered, old) == []
    assert _causes(validation.validate_update(kinds.PODS, cleared, old)) == [
        (INV, "spec.activeDeadlineSeconds")
    ]


_STATUS_OLD = _pod(make_pod().claim_template("gpu", "t").claim_ref("nic", "n"))


@pytest.mark.parametrize(
    ("statuses", "causes"),
    [
        pytest.param([{"name": "gpu", "resourceClaimName": "my-pod-gpu-x7k2p"}], [], id="valid"),
        pytest.param([{"name": "gpu"}], [], id="null-claim-name"),
        pytest.param(
            [{"name": "nic", "resourceClaimName": "n"}], [], id="entry-for-claim-ref-allowed"
        ),
        pytest.param(
            [{"name": "other", "resourceClaimName": "x"}],
            [(INV, "status.resourceClaimStatuses[0].name")],
            id="unknown-name",
        ),
        pytest.param(
            [{"name": "gpu", "resourceClaimName": "a"}, {"name": "gpu", "resourceClaimName": "b"}],
            [(DUP, "status.resourceClaimStatuses[1].name")],
            id="duplicate",
        ),
        pytest.param(
            [{"name": "gpu", "resourceClaimName": "Bad_Name"}],
            [(INV, "status.resourceClaimStatuses[0].resourceClaimName")],
            id="bad-claim-name",
        ),
    ],
)
def test_validate_pod_status_resource_claim_statuses(
    statuses: list[Obj], causes: list[tuple[str, str]]
) -> None:
    new = from_pod(_STATUS_OLD).set("status.resourceClaimStatuses", statuses).obj()
    assert _causes(validation.validate_status_update(kinds.PODS, new, _STATUS_OLD)) == causes


def test_pod_status_entries_may_be_removed_and_changed() -> None:
    old = from_pod(_STATUS_OLD).claim_status("gpu", "a").obj()
    changed = (
        from_pod(old)
        .set("status.resourceClaimStatuses", [{"name": "gpu", "resourceClaimName": "b"}])
        .obj()
    )
    removed = from_pod(old).set("status.resourceClaimStatuses", []).obj()
    assert validation.validate_status_update(kinds.PODS, changed, old) == []
    assert validation.validate_status_update(kinds.PODS, removed, old) == []


@pytest.mark.parametrize(
    ("status", "causes"),
    [
        pytest.param(
            {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]}, [], id="ips"
        ),
        pytest.param({"podIP": "300.1.1.1"}, [(INV, "status.podIP")], id="bad-ip"),
        pytest.param(
            {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.1"}]},
            [(DUP, "status.podIPs[1].ip")],
            id="duplicate-ip",
        ),
        pytest.param(
            {"nominatedNodeName": "Bad_Node"},
            [(INV, "status.nominatedNodeName")],
            id="nominated-node",
        ),
        pytest.param(
            {"conditions": [{"type": "Ready", "status": "True"}, {"type": "a/b/c", "status": "x"}]},
            [(INV, "status.conditions[1].type")],
            id="condition-type",
        ),
    ],
)
def test_validate_pod_status_fields(status: Obj, causes: list[tuple[str, str]]) -> None:
    new = from_pod(_STATUS_OLD).set("status", status).obj()
    assert _causes(validation.validate_status_update(kinds.PODS, new, _STATUS_OLD)) == causes


def test_pod_status_update_may_not_change_node_name() -> None:
    new = from_pod(_STATUS_OLD).node("node-1").obj()
    assert _causes(validation.validate_status_update(kinds.PODS, new, _STATUS_OLD)) == [
        (FORB, "status.nodeName")
    ]


def test_causes_render_as_a_kubernetes_status() -> None:
    pod = _pod(make_pod("web").container_fields(image="").claim_template("GPU", "t"))
    causes = validation.validate_create(kinds.PODS, pod)
    err = errors.invalid_object("Pod", "web", causes, kinds.PODS)
    assert err.code == 422
    assert err.message.startswith(
        'Pod "web" is invalid: [spec.resourceClaims[0].name: Invalid value: "GPU": '
        "a lowercase RFC 1123 label must consist of"
    )
    assert "spec.containers[0].image: Required value" in err.message
    assert err.details["causes"][-1] == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.containers[0].image",
    }
