"""Strategic merge patch of the workload kinds: the pod template's lists merge as a Pod's do
(containers and env by name, volumes by name with retainKeys), under every kind's template
path, and the workload kinds' own lists and retainKeys structs (tables read from the schemas)."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.api.patch import apply_strategic_merge_patch
from draplane.api.schema import schemas_for
from draplane.testing.workloadbuilders import (
    WorkloadBuilder,
    make_cron_job,
    make_daemon_set,
    make_deployment,
    make_job,
    make_replica_set,
    make_stateful_set,
)

_POD_TEMPLATE = ("spec", "template")
_JOB_TEMPLATE = ("spec", "jobTemplate", "spec", "template")
_WORKLOADS = [
    pytest.param(kinds.DEPLOYMENTS, make_deployment, _POD_TEMPLATE, id="deployment"),
    pytest.param(kinds.REPLICA_SETS, make_replica_set, _POD_TEMPLATE, id="replicaset"),
    pytest.param(kinds.STATEFUL_SETS, make_stateful_set, _POD_TEMPLATE, id="statefulset"),
    pytest.param(kinds.DAEMON_SETS, make_daemon_set, _POD_TEMPLATE, id="daemonset"),
    pytest.param(kinds.JOBS, make_job, _POD_TEMPLATE, id="job"),
    pytest.param(kinds.CRON_JOBS, make_cron_job, _JOB_TEMPLATE, id="cronjob"),
]
_ENV = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
_VOLUMES = [{"name": "data", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}]

_TEMPLATE_CASES = [
    pytest.param(
        {"containers": [{"name": "ctr", "image": "app:2"}]},
        ("containers",),
        [
            {"name": "ctr", "image": "app:2", "env": _ENV},
            {"name": "side", "image": "side:1"},
        ],
        id="containers-merge-by-name",
    ),
    pytest.param(
        {"containers": [{"name": "ctr", "env": [{"name": "B", "value": "3"}]}]},
        ("containers", 0, "env"),
        [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}],
        id="env-merges-by-name",
    ),
    pytest.param(
        {"containers": [{"name": "ctr", "env": [{"name": "A", "$patch": "delete"}]}]},
        ("containers", 0, "env"),
        [{"name": "B", "value": "2"}],
        id="env-delete-by-name",
    ),
    pytest.param(
        {
            "volumes": [
                {"name": "data", "hostPath": {"path": "/d"}, "$retainKeys": ["hostPath", "name"]}
            ]
        },
        ("volumes",),
        [{"name": "data", "hostPath": {"path": "/d"}}, {"name": "cache", "emptyDir": {}}],
        id="volumes-merge-by-name-retain-keys",
    ),
    pytest.param(
        {"containers": [{"name": "new", "image": "new:1"}]},
        ("containers",),
        [
            {"name": "new", "image": "new:1"},
            {"name": "ctr", "image": "registry.k8s.io/pause:3.9", "env": _ENV},
            {"name": "side", "image": "side:1"},
        ],
        id="containers-add-goes-first",
    ),
]


def _at(obj: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        obj = obj[part]
    return obj


def _nest(path: tuple[str, ...], leaf: Obj) -> Obj:
    for part in reversed(path):
        leaf = {part: leaf}
    return leaf


@pytest.mark.parametrize(("rt", "make", "template"), _WORKLOADS)
@pytest.mark.parametrize(("pod_patch", "path", "expected"), _TEMPLATE_CASES)
def test_pod_template_lists_merge_as_a_pods(
    rt: ResourceType,
    make: Any,
    template: tuple[str, ...],
    pod_patch: Obj,
    path: tuple[str | int, ...],
    expected: Any,
) -> None:
    builder: WorkloadBuilder = make("w").container("side", "side:1").pod_spec("volumes", _VOLUMES)
    original = builder.obj()
    _at(original, (*template, "spec", "containers", 0))["env"] = deep_copy(_ENV)
    patch = _nest((*template, "spec"), deep_copy(pod_patch))

    result = apply_strategic_merge_patch(original, patch, rt, schemas_for())

    assert _at(result, (*template, "spec", *path)) == expected


_rolling = make_deployment("d").strategy("RollingUpdate", maxSurge=1).obj()
_service: Obj = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "s", "namespace": "default"},
    "spec": {
        "ports": [
            {"name": "http", "port": 80, "protocol": "TCP"},
            {"name": "https", "port": 443, "protocol": "TCP"},
        ]
    },
}
_failed_job = make_job("j").status(conditions=[{"type": "Suspended", "status": "True"}]).obj()

_KIND_CASES = [
    pytest.param(
        kinds.DEPLOYMENTS,
        _rolling,
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        ("spec", "strategy"),
        {"type": "Recreate"},
        id="deployment-strategy-retain-keys",
    ),
    pytest.param(
        kinds.SERVICES,
        _service,
        {"spec": {"ports": [{"port": 80, "targetPort": 8080}]}},
        ("spec", "ports"),
        [
            {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
            {"name": "https", "port": 443, "protocol": "TCP"},
        ],
        id="service-ports-merge-by-port",
    ),
    pytest.param(
        kinds.JOBS,
        _failed_job,
        {"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        ("status", "conditions"),
        [{"type": "Complete", "status": "True"}, {"type": "Suspended", "status": "True"}],
        id="job-conditions-merge-by-type",
    ),
    pytest.param(
        kinds.DEPLOYMENTS,
        make_deployment("d").obj(),
        {"spec": {"selector": {"matchLabels": {"tier": "web"}}}},
        ("spec", "selector", "matchLabels"),
        {"app": "d", "tier": "web"},
        id="deployment-selector-labels-merge",
    ),
]


@pytest.mark.parametrize(("rt", "original", "patch", "path", "expected"), _KIND_CASES)
def test_workload_kind_lists(
    rt: ResourceType, original: Obj, patch: Obj, path: tuple[str, ...], expected: Any
) -> None:
    assert _at(apply_strategic_merge_patch(original, patch, rt, schemas_for()), path) == expected
