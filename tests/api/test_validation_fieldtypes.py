"""Field JSON types per kind (the decoding step): each mismatch is one cause at its field, and
the per-kind rules only run on a well-typed object."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.testing import kindrules as validation
from draplane.testing.builders import make_claim, make_node, make_pod
from draplane.testing.workloadbuilders import make_cron_job, make_deployment, make_job

TYPE = "FieldValueTypeInvalid"


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    *parents, last = path.split(".")
    node: Any = obj
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return obj


@pytest.mark.parametrize(
    ("rt", "obj", "causes"),
    [
        pytest.param(
            kinds.NODES,
            make_node().taint("k", "NoSchedule").obj(),
            [],
            id="valid-node",
        ),
        pytest.param(
            kinds.NODES,
            _with(make_node().taint("k", "NoSchedule").obj(), "spec.taints.0.key", ["x"]),
            [(TYPE, "spec.taints[0].key", 'Invalid value: ["x"]: must be a string')],
            id="taint-key-list",
        ),
        pytest.param(
            kinds.NODES,
            _with(make_node().obj(), "status.conditions", ["x"]),
            [(TYPE, "status.conditions[0]", 'Invalid value: "x": must be an object')],
            id="node-condition-string",
        ),
        pytest.param(
            kinds.PODS,
            _with(make_pod().obj(), "status", 5),
            [(TYPE, "status", "Invalid value: 5: must be an object")],
            id="pod-status-number",
        ),
        pytest.param(
            kinds.PODS,
            _with(make_pod().obj(), "status.containerStatuses", [{"restartCount": "1"}]),
            [
                (
                    TYPE,
                    "status.containerStatuses[0].restartCount",
                    'Invalid value: "1": must be an integer',
                )
            ],
            id="restart-count-string",
        ),
        pytest.param(
            kinds.PODS,
            _with(make_pod().obj(), "metadata.creationTimestamp", "yesterday"),
            [
                (
                    TYPE,
                    "metadata.creationTimestamp",
                    'Invalid value: "yesterday": must be an RFC 3339 timestamp',
                )
            ],
            id="timestamp-not-rfc3339",
        ),
        pytest.param(
            kinds.PODS,
            _with(make_pod().obj(), "metadata.labels", {"a": 1, "b": True}),
            [
                (TYPE, "metadata.labels", "Invalid value: 1: must be a string"),
                (TYPE, "metadata.labels", "Invalid value: true: must be a string"),
            ],
            id="label-values-report-at-the-map",
        ),
        pytest.param(
            kinds.RESOURCE_CLAIMS,
            _with(make_claim().obj(), "spec.resourceClassName", None),
            [],
            id="null-is-unset",
        ),
        pytest.param(
            kinds.EVENTS,
            {"metadata": {"name": "e"}, "count": "x", "series": {"count": 1.5}},
            [
                (TYPE, "count", 'Invalid value: "x": must be an integer'),
                (TYPE, "series.count", "Invalid value: 1.5: must be an integer"),
            ],
            id="event-counts",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            {"metadata": {"name": "c", "managedFields": 5}},
            [(TYPE, "metadata.managedFields", "Invalid value: 5: must be a list")],
            id="managed-fields-number",
        ),
        pytest.param(
            kinds.DEPLOYMENTS,
            _with(make_deployment().obj(), "spec.template.spec.containers.0.image", 5),
            [
                (
                    TYPE,
                    "spec.template.spec.containers[0].image",
                    "Invalid value: 5: must be a string",
                )
            ],
            id="deployment-template-image-number",
        ),
        pytest.param(
            kinds.DEPLOYMENTS,
            _with(make_deployment().obj(), "status.conditions", [{"lastUpdateTime": "soon"}]),
            [
                (
                    TYPE,
                    "status.conditions[0].lastUpdateTime",
                    'Invalid value: "soon": must be an RFC 3339 timestamp',
                )
            ],
            id="deployment-condition-update-time",
        ),
        pytest.param(
            kinds.JOBS,
            _with(make_job().obj(), "status.uncountedTerminatedPods", {"succeeded": "a"}),
            [
                (
                    TYPE,
                    "status.uncountedTerminatedPods.succeeded",
                    'Invalid value: "a": must be a list',
                )
            ],
            id="job-uncounted-pods-string",
        ),
        pytest.param(
            kinds.CRON_JOBS,
            _with(make_cron_job().obj(), "spec.jobTemplate.spec.parallelism", "2"),
            [(TYPE, "spec.jobTemplate.spec.parallelism", 'Invalid value: "2": must be an integer')],
            id="cronjob-job-template-parallelism",
        ),
        pytest.param(
            kinds.SECRETS,
            {"metadata": {"name": "s"}, "stringData": {"a": 1}, "immutable": "no"},
            [
                (TYPE, "stringData[a]", "Invalid value: 1: must be a string"),
                (TYPE, "immutable", 'Invalid value: "no": must be a boolean'),
            ],
            id="secret-string-data-and-immutable",
        ),
        pytest.param(
            kinds.SERVICES,
            {"metadata": {"name": "s"}, "spec": {"ports": [{"port": "80"}], "clusterIPs": "a"}},
            [
                (TYPE, "spec.ports[0].port", 'Invalid value: "80": must be an integer'),
                (TYPE, "spec.clusterIPs", 'Invalid value: "a": must be a list'),
            ],
            id="service-port-and-cluster-ips",
        ),
        pytest.param(
            kinds.ENDPOINT_SLICES,
            {
                "metadata": {"name": "e"},
                "addressType": "IPv4",
                "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": "yes"}}],
            },
            [(TYPE, "endpoints[0].conditions.ready", 'Invalid value: "yes": must be a boolean')],
            id="endpoint-slice-condition",
        ),
    ],
)
def test_type_errors(
    rt: ResourceType, obj: dict[str, Any], causes: list[tuple[str, str, str]]
) -> None:
    assert [(e.type, e.field, e.message()) for e in validation.type_errors(rt, obj)] == causes


def test_type_errors_come_alone() -> None:
    pod = _with(make_pod().obj(), "spec.containers.0.name", 5)
    pod["metadata"]["name"] = "Not A Name"
    causes = validation.validate_create(kinds.PODS, pod)
    assert [(c.type, c.field) for c in causes] == [(TYPE, "spec.containers[0].name")]
