"""Strategic merge patch on Pods: every merge key of the Pod table (containers, spec, status)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.api.patch import apply_strategic_merge_patch
from draplane.api.schema import schemas_for
from draplane.testing.builders import make_pod

MISSING = object()

app_container = {
    "name": "app",
    "image": "app:1",
    "ports": [
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 443, "protocol": "TCP"},
    ],
    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    "volumeDevices": [{"name": "blk", "devicePath": "/dev/xvda"}],
    "resources": {"claims": [{"name": "gpu"}]},
}
sidecar = {"name": "sidecar", "image": "side:1"}

rich_pod = (
    make_pod("web")
    .uid("pod-uid")
    .finalizer("a")
    .owner("ReplicaSet", "rs", "rs-uid")
    .label("app", "web")
    .set("metadata.managedFields", [{"manager": "kubectl", "operation": "Update"}])
    .set("spec.containers", [app_container, sidecar])
    .set("spec.initContainers", [{"name": "init", "image": "init:1"}])
    .set("spec.ephemeralContainers", [{"name": "debug", "image": "busybox"}])
    .set("spec.volumes", [{"name": "data", "hostPath": {"path": "/srv"}}])
    .set("spec.imagePullSecrets", [{"name": "reg"}])
    .set("spec.hostAliases", [{"ip": "10.0.0.1", "hostnames": ["a"]}])
    .set("spec.resourceClaims", [{"name": "gpu", "source": {"resourceClaimTemplateName": "t"}}])
    .set("spec.schedulingGates", [{"name": "gate-a"}, {"name": "gate-b"}])
    .set("spec.tolerations", [{"key": "k", "operator": "Exists"}])
    .set("spec.readinessGates", [{"conditionType": "a"}])
    .set("spec.nodeSelector", {"zone": "a"})
    .set(
        "spec.topologySpreadConstraints",
        [{"topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1}],
    )
    .set(
        "status",
        {
            "conditions": [
                {"type": "Ready", "status": "False"},
                {"type": "PodScheduled", "status": "True"},
            ],
            "podIPs": [{"ip": "10.1.0.5"}],
            "hostIPs": [{"ip": "192.0.2.1"}],
            "containerStatuses": [{"name": "app", "ready": False}],
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-gpu"}],
        },
    )
    .obj()
)


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


def containers(*items: Obj) -> Obj:
    return {"spec": {"containers": list(items)}}


def app(**fields: Any) -> Obj:
    return {"name": "app", **fields}


APP = ("spec", "containers", 0)
CASES = [
    # containers (merge key name): the upstream SMP document examples.
    pytest.param(
        Case(
            rich_pod,
            containers({"name": "log-tailer", "image": "log-tailer-1.0"}),
            ("spec", "containers"),
            [{"name": "log-tailer", "image": "log-tailer-1.0"}, app_container, sidecar],
        ),
        id="containers-add-by-name-new-first",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers({"name": "sidecar", "image": "side:2"}),
            ("spec", "containers"),
            [app_container, {"name": "sidecar", "image": "side:2"}],
        ),
        id="containers-merge-by-name-keeps-order",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers({"$patch": "delete", "name": "sidecar"}),
            ("spec", "containers"),
            [app_container],
        ),
        id="containers-patch-delete-element",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers({"name": "only", "image": "o"}, {"$patch": "replace"}),
            ("spec", "containers"),
            [{"name": "only", "image": "o"}],
        ),
        id="containers-patch-replace-list",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}},
            ("spec", "containers"),
            [sidecar, app_container],
        ),
        id="containers-set-element-order",
    ),
    pytest.param(
        Case(
            rich_pod,
            {
                "spec": {
                    "$setElementOrder/containers": [
                        {"name": "app"},
                        {"name": "new"},
                        {"name": "sidecar"},
                    ],
                    "containers": [{"name": "new", "image": "n"}],
                }
            },
            ("spec", "containers"),
            [app_container, {"name": "new", "image": "n"}, sidecar],
        ),
        id="containers-set-element-order-with-addition",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"initContainers": [{"name": "init", "image": "init:2"}]}},
            ("spec", "initContainers"),
            [{"name": "init", "image": "init:2"}],
        ),
        id="init-containers-by-name",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"ephemeralContainers": [{"name": "d2", "image": "x"}]}},
            ("spec", "ephemeralContainers"),
            [{"name": "d2", "image": "x"}, {"name": "debug", "image": "busybox"}],
        ),
        id="ephemeral-containers-by-name",
    ),
    # container sub-lists
    pytest.param(
        Case(
            rich_pod,
            containers(app(ports=[{"containerPort": 443, "name": "https"}])),
            (*APP, "ports"),
            [
                {"containerPort": 80, "protocol": "TCP"},
                {"containerPort": 443, "protocol": "TCP", "name": "https"},
            ],
        ),
        id="ports-by-container-port",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers(app(env=[{"name": "B", "value": "3"}])),
            (*APP, "env"),
            [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}],
        ),
        id="env-by-name",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers(app(env=[{"name": "A", "$patch": "delete"}])),
            (*APP, "env"),
            [{"name": "B", "value": "2"}],
        ),
        id="env-patch-delete",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers(
                app(
                    env=[
                        {
                            "name": "B",
                            "value": None,
                            "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                        }
                    ]
                )
            ),
            (*APP, "env", 1),
            {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        ),
        id="env-null-deletes-field-in-element",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers(app(volumeMounts=[{"mountPath": "/data", "readOnly": True}])),
            (*APP, "volumeMounts"),
            [{"name": "data", "mountPath": "/data", "readOnly": True}],
        ),
        id="volume-mounts-by-mount-path",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers(app(volumeDevices=[{"devicePath": "/dev/xvda", "name": "b2"}])),
            (*APP, "volumeDevices"),
            [{"name": "b2", "devicePath": "/dev/xvda"}],
        ),
        id="volume-devices-by-device-path",
    ),
    pytest.param(
        Case(
            rich_pod,
            containers(app(resources={"claims": [{"name": "other"}]})),
            (*APP, "resources"),
            {"claims": [{"name": "other"}]},
        ),
        id="resources-claims-atomic-in-smp",
    ),
    pytest.param(
        Case(rich_pod, containers(app(image="app:2")), APP, {**app_container, "image": "app:2"}),
        id="container-scalar-field-keeps-lists",
    ),
    # pod spec lists
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"volumes": [{"name": "data", "emptyDir": {}}]}},
            ("spec", "volumes"),
            [{"name": "data", "hostPath": {"path": "/srv"}, "emptyDir": {}}],
        ),
        id="volumes-merge-without-retain-keys",
    ),
    pytest.param(
        Case(
            rich_pod,
            {
                "spec": {
                    "volumes": [
                        {"name": "data", "emptyDir": {}, "$retainKeys": ["emptyDir", "name"]}
                    ]
                }
            },
            ("spec", "volumes"),
            [{"name": "data", "emptyDir": {}}],
        ),
        id="volumes-retain-keys",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"imagePullSecrets": [{"name": "reg2"}]}},
            ("spec", "imagePullSecrets"),
            [{"name": "reg2"}, {"name": "reg"}],
        ),
        id="image-pull-secrets-by-name",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["b"]}]}},
            ("spec", "hostAliases"),
            [{"ip": "10.0.0.1", "hostnames": ["b"]}],
        ),
        id="host-aliases-by-ip",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"resourceClaims": [{"name": "gpu", "source": {"resourceClaimName": "c"}}]}},
            ("spec", "resourceClaims"),
            [
                {
                    "name": "gpu",
                    "source": {"resourceClaimTemplateName": "t", "resourceClaimName": "c"},
                }
            ],
        ),
        id="resource-claims-by-name",
    ),
    pytest.param(
        Case(
            rich_pod,
            {
                "spec": {
                    "resourceClaims": [
                        {
                            "name": "gpu",
                            "source": {
                                "resourceClaimName": "c",
                                "$retainKeys": ["resourceClaimName"],
                            },
                        }
                    ]
                }
            },
            ("spec", "resourceClaims"),
            [{"name": "gpu", "source": {"resourceClaimName": "c"}}],
        ),
        id="resource-claims-retain-keys",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"schedulingGates": [{"$patch": "delete", "name": "gate-a"}]}},
            ("spec", "schedulingGates"),
            [{"name": "gate-b"}],
        ),
        id="scheduling-gates-delete-by-name",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}},
            ("spec", "tolerations"),
            [{"key": "k2", "operator": "Exists"}],
        ),
        id="tolerations-atomic",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"readinessGates": [{"conditionType": "b"}]}},
            ("spec", "readinessGates"),
            [{"conditionType": "b"}],
        ),
        id="readiness-gates-atomic",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"spec": {"topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 2}]}},
            ("spec", "topologySpreadConstraints"),
            [{"topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}],
        ),
        id="topology-spread-by-topology-key",
    ),
    # pod status lists
    pytest.param(
        Case(
            rich_pod,
            {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            ("status", "conditions"),
            [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        ),
        id="pod-conditions-by-type",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"status": {"conditions": [{"type": "Init", "status": "True"}]}},
            ("status", "conditions"),
            [
                {"type": "Init", "status": "True"},
                {"type": "Ready", "status": "False"},
                {"type": "PodScheduled", "status": "True"},
            ],
        ),
        id="pod-conditions-new-type-first",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"status": {"podIPs": [{"ip": "fd00::5"}]}},
            ("status", "podIPs"),
            [{"ip": "fd00::5"}, {"ip": "10.1.0.5"}],
        ),
        id="pod-ips-by-ip",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"status": {"hostIPs": [{"ip": "192.0.2.1"}, {"ip": "fd00::1"}]}},
            ("status", "hostIPs"),
            [{"ip": "192.0.2.1"}, {"ip": "fd00::1"}],
        ),
        id="host-ips-by-ip",
    ),
    pytest.param(
        Case(
            rich_pod,
            {"status": {"containerStatuses": [{"name": "app", "ready": True}]}},
            ("status", "containerStatuses"),
            [{"name": "app", "ready": True}],
        ),
        id="container-statuses-atomic",
    ),
    pytest.param(
        Case(
            rich_pod,
            {
                "status": {
                    "resourceClaimStatuses": [
                        {"name": "gpu", "resourceClaimName": None},
                        {"name": "fpga", "resourceClaimName": "web-fpga"},
                    ]
                }
            },
            ("status", "resourceClaimStatuses"),
            [{"name": "gpu"}, {"name": "fpga", "resourceClaimName": "web-fpga"}],
        ),
        id="resource-claim-statuses-by-name",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_strategic_merge_patch(case: Case) -> None:
    original = deep_copy(case.original)
    patch = deep_copy(case.patch)

    result = apply_strategic_merge_patch(case.original, case.patch, case.rt, schemas_for())

    assert at(result, case.path) == case.expected
    assert (case.original, case.patch) == (original, patch)


def test_unpatched_fields_survive() -> None:
    result = apply_strategic_merge_patch(
        rich_pod, {"spec": {"priority": 5}}, kinds.PODS, schemas_for()
    )

    expected = deep_copy(rich_pod)
    expected["spec"]["priority"] = 5
    assert result == expected
