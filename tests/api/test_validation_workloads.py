"""Defaulting and validation of the apps/v1 and batch/v1 kinds, table-driven with the workload
builders: each case defaults the object as the registry does, then checks the field paths and
messages of the causes (kube-apiserver's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver.strategies.workloads import generate_job_selector
from draplane.testing import kindrules as validation
from draplane.testing.workloadbuilders import (
    WorkloadBuilder,
    make_controller_revision,
    make_cron_job,
    make_daemon_set,
    make_deployment,
    make_job,
    make_replica_set,
    make_stateful_set,
)


def _defaulted(rt: ResourceType, obj: Obj) -> Obj:
    validation.default(rt, obj)
    if rt is kinds.JOBS:
        generate_job_selector(obj)
    return obj


def _causes(rt: ResourceType, builder: WorkloadBuilder) -> list[str]:
    obj = _defaulted(rt, builder.obj())
    return [f"{c.field}: {c.message()}" for c in validation.validate_create(rt, obj)]


VALID = [
    (kinds.DEPLOYMENTS, make_deployment()),
    (kinds.REPLICA_SETS, make_replica_set()),
    (kinds.STATEFUL_SETS, make_stateful_set()),
    (kinds.DAEMON_SETS, make_daemon_set()),
    (kinds.CONTROLLER_REVISIONS, make_controller_revision()),
    (kinds.JOBS, make_job()),
    (kinds.CRON_JOBS, make_cron_job()),
    (kinds.CRON_JOBS, make_cron_job(schedule="@hourly").time_zone("Europe/Berlin")),
    (kinds.JOBS, make_job().completion_mode("Indexed").completions(3).parallelism(3)),
    (kinds.DEPLOYMENTS, make_deployment().claim_template("gpu", "gpu-template")),
]


@pytest.mark.parametrize(("rt", "builder"), VALID, ids=lambda v: getattr(v, "kind", ""))
def test_builders_make_valid_objects(rt: ResourceType, builder: WorkloadBuilder) -> None:
    assert _causes(rt, builder) == []


INVALID: list[tuple[str, ResourceType, WorkloadBuilder, list[str]]] = [
    (
        "deployment selector does not match",
        kinds.DEPLOYMENTS,
        make_deployment().selector({"app": "other"}),
        [
            'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
            "`selector` does not match template `labels`"
        ],
    ),
    (
        "deployment selector required",
        kinds.DEPLOYMENTS,
        make_deployment().selector(None),
        [
            "spec.selector: Required value",
            # A nil selector selects nothing, so it does not match the labels either.
            'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
            "`selector` does not match template `labels`",
        ],
    ),
    (
        "deployment empty selector",
        kinds.DEPLOYMENTS,
        make_deployment().selector({}),
        [
            'spec.selector: Invalid value: {"matchLabels":{}}: '
            "empty selector is invalid for deployment"
        ],
    ),
    (
        "deployment negative replicas",
        kinds.DEPLOYMENTS,
        make_deployment().replicas(-1),
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "deployment restartPolicy",
        kinds.DEPLOYMENTS,
        make_deployment().restart_policy("OnFailure"),
        [
            'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
            'supported values: "Always"'
        ],
    ),
    (
        "deployment surge and unavailable 0",
        kinds.DEPLOYMENTS,
        make_deployment().strategy("RollingUpdate", maxSurge=0, maxUnavailable=0),
        [
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: "
            "may not be 0 when `maxSurge` is 0"
        ],
    ),
    (
        "deployment unavailable over 100%",
        kinds.DEPLOYMENTS,
        make_deployment().strategy("RollingUpdate", maxSurge="200%", maxUnavailable="150%"),
        [
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": '
            "must not be greater than 100%"
        ],
    ),
    (
        "deployment bad percent",
        kinds.DEPLOYMENTS,
        make_deployment().strategy("RollingUpdate", maxSurge="x%", maxUnavailable=1),
        [
            'spec.strategy.rollingUpdate.maxSurge: Invalid value: "x%": a valid percent string '
            "must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex "
            "used for validation is '[0-9]+%')"
        ],
    ),
    (
        "deployment recreate with rollingUpdate",
        kinds.DEPLOYMENTS,
        make_deployment().strategy("Recreate", maxSurge=1),
        [
            "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` "
            "is 'Recreate'"
        ],
    ),
    (
        "deployment progress deadline",
        kinds.DEPLOYMENTS,
        make_deployment().min_ready_seconds(600),
        ["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
    ),
    (
        "deployment pod claim unknown",
        kinds.DEPLOYMENTS,
        make_deployment().pod_spec("resourceClaims", [{"name": "a", "source": {}}]),
        [
            "spec.template.spec.resourceClaims[0].source: Invalid value: {}: "
            "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
        ],
    ),
    (
        "replicaset active deadline",
        kinds.REPLICA_SETS,
        make_replica_set().pod_spec("activeDeadlineSeconds", 5),
        [
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
            "ReplicaSet is not Supported"
        ],
    ),
    (
        "statefulset bad policy",
        kinds.STATEFUL_SETS,
        make_stateful_set().pod_management_policy("Random"),
        [
            'spec.podManagementPolicy: Invalid value: "Random": '
            "must be 'OrderedReady' or 'Parallel'"
        ],
    ),
    (
        "statefulset negative partition",
        kinds.STATEFUL_SETS,
        make_stateful_set().update_strategy("RollingUpdate", partition=-1),
        [
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: "
            "must be greater than or equal to 0"
        ],
    ),
    (
        "statefulset ondelete with rollingUpdate",
        kinds.STATEFUL_SETS,
        make_stateful_set().update_strategy("OnDelete", partition=1),
        [
            'spec.updateStrategy.rollingUpdate: Invalid value: {"partition":1}: '
            "only allowed for updateStrategy 'RollingUpdate'"
        ],
    ),
    (
        "statefulset negative ordinals",
        kinds.STATEFUL_SETS,
        make_stateful_set().set("spec.ordinals", {"start": -2}),
        ["spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0"],
    ),
    (
        "daemonset surge and unavailable",
        kinds.DAEMON_SETS,
        make_daemon_set().update_strategy("RollingUpdate", maxSurge=1, maxUnavailable=1),
        [
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: "
            "may not be set when maxUnavailable is non-zero"
        ],
    ),
    (
        "daemonset both zero",
        kinds.DAEMON_SETS,
        make_daemon_set().update_strategy("RollingUpdate", maxSurge=0, maxUnavailable=0),
        [
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: "
            "cannot be 0 when maxSurge is 0"
        ],
    ),
    (
        "job restartPolicy Always",
        kinds.JOBS,
        make_job().restart_policy("Always"),
        ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ),
    (
        "job indexed without completions",
        kinds.JOBS,
        make_job().completion_mode("Indexed").completions(None).parallelism(2),
        ["spec.completions: Required value: when completion mode is Indexed"],
    ),
    (
        "job indexed hostname too long",
        kinds.JOBS,
        make_job("x" * 60).uid("u1").completion_mode("Indexed").completions(1000),
        [
            f'metadata.name: Invalid value: "{"x" * 60}": will not able to create pod with '
            f"invalid DNS label: {'x' * 60}-999"
        ],
    ),
    (
        "job failure policy needs Never",
        kinds.JOBS,
        make_job()
        .restart_policy("OnFailure")
        .pod_failure_policy(
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
        ),
        [
            'spec.template.spec.restartPolicy: Invalid value: "OnFailure": '
            'only "Never" is supported when podFailurePolicy is specified'
        ],
    ),
    (
        "job negative backoff",
        kinds.JOBS,
        make_job().backoff_limit(-1),
        ["spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "cronjob schedule fields",
        kinds.CRON_JOBS,
        make_cron_job(schedule="* * *"),
        ['spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]'],
    ),
    (
        "cronjob schedule range",
        kinds.CRON_JOBS,
        make_cron_job(schedule="70 * * * *"),
        ['spec.schedule: Invalid value: "70 * * * *": end of range (70) above maximum (59): 70'],
    ),
    (
        "cronjob descriptor",
        kinds.CRON_JOBS,
        make_cron_job(schedule="@fortnightly"),
        ['spec.schedule: Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly'],
    ),
    (
        "cronjob TZ in schedule",
        kinds.CRON_JOBS,
        make_cron_job(schedule="TZ=UTC 0 * * * *"),
        [
            'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in '
            "schedule, use timeZone field instead"
        ],
    ),
    (
        "cronjob unknown zone",
        kinds.CRON_JOBS,
        make_cron_job().time_zone("Mars/Olympus"),
        ['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'],
    ),
    (
        "cronjob concurrency",
        kinds.CRON_JOBS,
        make_cron_job().concurrency_policy("Sometimes"),
        [
            'spec.concurrencyPolicy: Unsupported value: "Sometimes": '
            'supported values: "Allow", "Forbid", "Replace"'
        ],
    ),
    (
        "cronjob name too long",
        kinds.CRON_JOBS,
        make_cron_job("c" * 53),
        [f'metadata.name: Invalid value: "{"c" * 53}": must be no more than 52 characters'],
    ),
    (
        "cronjob template selector",
        kinds.CRON_JOBS,
        make_cron_job().set("spec.jobTemplate.spec.selector", {"matchLabels": {"a": "b"}}),
        [
            'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: '
            "`selector` will be auto-generated"
        ],
    ),
    (
        "controllerrevision without data",
        kinds.CONTROLLER_REVISIONS,
        make_controller_revision().set("data", None),
        ["data: Required value: data is mandatory"],
    ),
]


@pytest.mark.parametrize(
    ("rt", "builder", "expected"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_create_validation(rt: ResourceType, builder: WorkloadBuilder, expected: list[str]) -> None:
    assert _causes(rt, builder) == expected


def _spec(obj: Obj) -> Obj:
    spec: Obj = obj["spec"]
    return spec


DEFAULTS: list[
    tuple[str, ResourceType, Callable[[], WorkloadBuilder], Callable[[Obj], Any], Any]
] = [
    (
        "deployment",
        kinds.DEPLOYMENTS,
        make_deployment,
        lambda o: {
            k: _spec(o)[k]
            for k in ("replicas", "strategy", "revisionHistoryLimit", "progressDeadlineSeconds")
        },
        {
            "replicas": 1,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
            },
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        },
    ),
    (
        "deployment template",
        kinds.DEPLOYMENTS,
        make_deployment,
        lambda o: (
            _spec(o)["template"]["metadata"],
            _spec(o)["template"]["spec"]["restartPolicy"],
            o["status"],
        ),
        ({"labels": {"app": "web"}, "creationTimestamp": None}, "Always", {}),
    ),
    ("replicaset", kinds.REPLICA_SETS, make_replica_set, lambda o: _spec(o)["replicas"], 1),
    (
        "statefulset",
        kinds.STATEFUL_SETS,
        make_stateful_set,
        lambda o: {
            k: _spec(o)[k]
            for k in (
                "replicas",
                "podManagementPolicy",
                "updateStrategy",
                "revisionHistoryLimit",
                "persistentVolumeClaimRetentionPolicy",
            )
        },
        {
            "replicas": 1,
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "revisionHistoryLimit": 10,
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Retain",
                "whenScaled": "Retain",
            },
        },
    ),
    (
        "daemonset",
        kinds.DAEMON_SETS,
        make_daemon_set,
        lambda o: (_spec(o)["updateStrategy"], _spec(o)["revisionHistoryLimit"]),
        ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}, 10),
    ),
    (
        "job",
        kinds.JOBS,
        make_job,
        lambda o: {
            k: _spec(o)[k]
            for k in (
                "completions",
                "parallelism",
                "backoffLimit",
                "completionMode",
                "suspend",
                "podReplacementPolicy",
                "manualSelector",
            )
        },
        {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            "manualSelector": False,
        },
    ),
    (
        "job with only parallelism (work queue)",
        kinds.JOBS,
        lambda: make_job().parallelism(3),
        lambda o: (_spec(o).get("completions"), _spec(o)["parallelism"]),
        (None, 3),
    ),
    (
        "job with only completions",
        kinds.JOBS,
        lambda: make_job().completions(5),
        lambda o: (_spec(o)["completions"], _spec(o)["parallelism"]),
        (5, 1),
    ),
    (
        "job with backoffLimitPerIndex",
        kinds.JOBS,
        lambda: make_job().set("spec.backoffLimitPerIndex", 1),
        lambda o: _spec(o)["backoffLimit"],
        2**31 - 1,
    ),
    (
        "job with podFailurePolicy",
        kinds.JOBS,
        lambda: make_job().pod_failure_policy(
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
        ),
        lambda o: (
            _spec(o)["podReplacementPolicy"],
            _spec(o)["podFailurePolicy"]["rules"][0]["onPodConditions"],
        ),
        ("Failed", [{"type": "DisruptionTarget", "status": "True"}]),
    ),
    (
        "cronjob",
        kinds.CRON_JOBS,
        make_cron_job,
        lambda o: {
            k: _spec(o)[k]
            for k in (
                "concurrencyPolicy",
                "suspend",
                "successfulJobsHistoryLimit",
                "failedJobsHistoryLimit",
            )
        },
        {
            "concurrencyPolicy": "Allow",
            "suspend": False,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
        },
    ),
    (
        "cronjob job template is not job-defaulted",
        kinds.CRON_JOBS,
        make_cron_job,
        lambda o: sorted(_spec(o)["jobTemplate"]["spec"]),
        ["template"],
    ),
]


@pytest.mark.parametrize(
    ("rt", "build", "read", "expected"), [c[1:] for c in DEFAULTS], ids=[c[0] for c in DEFAULTS]
)
def test_defaults(
    rt: ResourceType,
    build: Callable[[], WorkloadBuilder],
    read: Callable[[Obj], Any],
    expected: Any,
) -> None:
    obj = build().obj()
    validation.default(rt, obj)
    assert read(obj) == expected


def _update_causes(
    rt: ResourceType, old: WorkloadBuilder, change: Callable[[Obj], None]
) -> list[str]:
    before = _defaulted(rt, old.obj())
    after = _defaulted(rt, old.obj())
    change(after)
    validation.default(rt, after)
    return [f"{c.field}: {c.message()}" for c in validation.validate_update(rt, after, before)]


def _set(path: str, value: Any) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        *parents, last = path.split(".")
        target = obj
        for p in parents:
            target = target.setdefault(p, {})
        target[last] = value

    return change


UPDATES: list[tuple[str, ResourceType, WorkloadBuilder, Callable[[Obj], None], list[str]]] = [
    ("deployment replicas", kinds.DEPLOYMENTS, make_deployment(), _set("spec.replicas", 4), []),
    (
        "deployment selector immutable",
        kinds.DEPLOYMENTS,
        make_deployment().template_label("tier", "a"),
        _set("spec.selector", {"matchLabels": {"app": "web", "tier": "a"}}),
        [
            'spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"a"}}: '
            "field is immutable"
        ],
    ),
    (
        "statefulset serviceName immutable",
        kinds.STATEFUL_SETS,
        make_stateful_set(),
        _set("spec.serviceName", "other"),
        [
            "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
            "'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
            "and 'minReadySeconds' are forbidden"
        ],
    ),
    (
        "statefulset template",
        kinds.STATEFUL_SETS,
        make_stateful_set(),
        _set("spec.template.spec.containers", [{"name": "c", "image": "x"}]),
        [],
    ),
    (
        "job template immutable",
        kinds.JOBS,
        make_job(),
        _set("spec.template.spec.activeDeadlineSeconds", 5),
        None,  # checked by prefix below
    ),
    (
        "job completions immutable",
        kinds.JOBS,
        make_job(),
        _set("spec.completions", 3),
        ["spec.completions: Invalid value: 3: field is immutable"],
    ),
    (
        "indexed job completions with parallelism",
        kinds.JOBS,
        make_job().completion_mode("Indexed").completions(2).parallelism(2),
        lambda o: _spec(o).update(completions=4, parallelism=4),
        [],
    ),
    (
        "indexed job completions alone",
        kinds.JOBS,
        make_job().completion_mode("Indexed").completions(2).parallelism(2),
        _set("spec.completions", 4),
        [
            (
                "spec.completions: Invalid value: 4: can only be modified in tandem "
                "with spec.parallelism"
            )
        ],
    ),
    (
        "suspended job scheduling directives",
        kinds.JOBS,
        make_job().suspend(),
        _set("spec.template.spec.nodeSelector", {"zone": "a"}),
        [],
    ),
    ("job parallelism", kinds.JOBS, make_job(), _set("spec.parallelism", 5), []),
    (
        "controllerrevision data immutable",
        kinds.CONTROLLER_REVISIONS,
        make_controller_revision(),
        _set("data", {"x": 1}),
        ['data: Invalid value: {"x":1}: field is immutable'],
    ),
]


@pytest.mark.parametrize(
    ("rt", "old", "change", "expected"), [c[1:] for c in UPDATES], ids=[c[0] for c in UPDATES]
)
def test_update_validation(
    rt: ResourceType,
    old: WorkloadBuilder,
    change: Callable[[Obj], None],
    expected: list[str] | None,
) -> None:
    causes = _update_causes(rt, old, change)
    if expected is None:
        assert [c.split(":")[0] for c in causes] == ["spec.template"]
        assert causes[0].endswith("field is immutable")
    else:
        assert causes == expected


STATUS: list[tuple[str, ResourceType, WorkloadBuilder, Obj, list[str]]] = [
    (
        "deployment ok",
        kinds.DEPLOYMENTS,
        make_deployment(),
        {"replicas": 2, "readyReplicas": 2, "availableReplicas": 1},
        [],
    ),
    (
        "deployment available over ready",
        kinds.DEPLOYMENTS,
        make_deployment(),
        {"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
        ["status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas"],
    ),
    (
        "replicaset ready over replicas",
        kinds.REPLICA_SETS,
        make_replica_set(),
        {"replicas": 1, "readyReplicas": 2},
        ["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"],
    ),
    (
        "job negative",
        kinds.JOBS,
        make_job(),
        {"active": -1},
        ["status.active: Invalid value: -1: must be greater than or equal to 0"],
    ),
]


@pytest.mark.parametrize(
    ("rt", "old", "status", "expected"), [c[1:] for c in STATUS], ids=[c[0] for c in STATUS]
)
def test_status_validation(
    rt: ResourceType, old: WorkloadBuilder, status: Obj, expected: list[str]
) -> None:
    before = _defaulted(rt, old.obj())
    after = {**before, "status": status}
    causes = validation.validate_status_update(rt, after, before)
    assert [f"{c.field}: {c.message()}" for c in causes] == expected
