"""Defaulting Kubernetes applies on create and update (SetDefaults_* plus strategy fields), one
function per kind (`default_<kind>`), which the kind's declaration names
(`draplane.apiserver.strategies`); the device kinds' are in `devicedefaults`, the network kinds'
in `networkdefaults`.

Functions change the object in place and never raise on malformed input: they skip what they
cannot read, and validation then reports it.
"""

from __future__ import annotations

from typing import Any

from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity


def _dict(parent: Obj, key: str) -> Obj | None:
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _claim_spec(spec: Obj | None) -> None:
    if spec is not None and not spec.get("allocationMode"):
        spec["allocationMode"] = "WaitForFirstConsumer"


def _structs(obj: Obj, *fields: str) -> None:
    """Non-pointer struct fields are always on the wire (`"status": {}`), as Go encodes them."""
    for field in fields:
        if obj.get(field) is None:
            obj[field] = {}


def default_claim(obj: Obj) -> None:
    _structs(obj, "spec", "status")
    _claim_spec(_dict(obj, "spec"))


def default_template(obj: Obj) -> None:
    _structs(obj, "spec")
    spec = _dict(obj, "spec")
    if spec is not None:
        _structs(spec, "metadata", "spec")
        template_md = _dict(spec, "metadata")
        if template_md is not None and "creationTimestamp" not in template_md:
            template_md["creationTimestamp"] = None  # metav1.Time without omitempty
        _claim_spec(_dict(spec, "spec"))


def default_scheduling_context(obj: Obj) -> None:
    _structs(obj, "spec", "status")


def default_lease(obj: Obj) -> None:
    _structs(obj, "spec")


_POD_SPEC_DEFAULTS: dict[str, Any] = {
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "enableServiceLinks": True,
    "priority": 0,
}


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and the containers' defaults (pods and pod templates)."""
    for key, value in _POD_SPEC_DEFAULTS.items():
        if spec.get(key) is None:
            spec[key] = value
    for key in ("initContainers", "containers", "ephemeralContainers"):
        containers = spec.get(key)
        if isinstance(containers, list):
            for c in containers:
                if isinstance(c, dict):
                    _default_container(c)


def default_pod(obj: Obj) -> None:
    spec = _dict(obj, "spec")
    if spec is None:
        return
    default_pod_spec(spec)
    status = obj.get("status")
    if status is None:
        status = obj["status"] = {}
    if isinstance(status, dict):
        if not status.get("phase"):
            status["phase"] = "Pending"
        if not status.get("qosClass"):
            qos = _qos_class(spec)
            if qos:
                status["qosClass"] = qos


def _default_container(c: Obj) -> None:
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = _pull_policy(c.get("image"))
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = "/dev/termination-log"
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    ports = c.get("ports")
    if isinstance(ports, list):
        for p in ports:
            if isinstance(p, dict) and not p.get("protocol"):
                p["protocol"] = "TCP"
    resources = _dict(c, "resources")
    limits = _dict(resources, "limits") if resources is not None else None
    if resources is not None and limits:
        requests = resources.get("requests")
        if requests is None:
            requests = resources["requests"] = {}
        if isinstance(requests, dict):
            # SetDefaults_Pod: a limit without a request also sets the request.
            for name, value in limits.items():
                requests.setdefault(name, value)


def _pull_policy(image: Any) -> str:
    """`Always` for `:latest` or an untagged image, else `IfNotPresent` (digests count as tags)."""
    if not isinstance(image, str):
        return "IfNotPresent"
    if "@" in image:
        return "IfNotPresent"
    last = image.rpartition("/")[2]
    if ":" not in last:
        return "Always"
    return "Always" if last.rpartition(":")[2] == "latest" else "IfNotPresent"


def _qos_class(spec: Obj) -> str:
    """BestEffort, Burstable or Guaranteed, from the containers' cpu/memory requests and limits."""
    containers = [
        c
        for key in ("initContainers", "containers")
        for c in (spec.get(key) or [])
        if isinstance(c, dict)
    ]
    if not isinstance(spec.get("containers"), list):
        return ""
    any_set = False
    guaranteed = True
    try:
        for c in containers:
            res = c.get("resources") or {}
            requests = {k: parse_quantity(v) for k, v in (res.get("requests") or {}).items()}
            limits = {k: parse_quantity(v) for k, v in (res.get("limits") or {}).items()}
            for name in ("cpu", "memory"):
                if name in requests or name in limits:
                    any_set = True
                if name not in limits or requests.get(name, limits[name]) != limits[name]:
                    guaranteed = False
    except (ValueError, AttributeError, TypeError):
        return ""
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def default_namespace(obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if isinstance(spec, dict) and not spec.get("finalizers"):
        spec["finalizers"] = ["kubernetes"]
    status = obj.get("status")
    if status is None:
        status = obj["status"] = {}
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Active"


def default_node(obj: Obj) -> None:
    _structs(obj, "spec", "status")
    status = _dict(obj, "status")
    if status is not None and status.get("allocatable") is None:
        capacity = status.get("capacity")
        if isinstance(capacity, dict):
            status["allocatable"] = dict(capacity)


def default_event(obj: Obj) -> None:
    """core/v1 Events without timestamps get creation time, so `kubectl describe` shows an age."""
    md = _dict(obj, "metadata")
    created = md.get("creationTimestamp") if md is not None else None
    if obj.get("eventTime") or obj.get("firstTimestamp") or not created:
        return
    obj["firstTimestamp"] = created
    if not obj.get("lastTimestamp"):
        obj["lastTimestamp"] = created
    if not obj.get("count"):
        obj["count"] = 1


# Workloads (pkg/apis/apps/v1/defaults.go, pkg/apis/batch/v1/defaults.go) ----------------------


def _default_pod_template(template: Any) -> None:
    """A PodTemplateSpec: `metadata.creationTimestamp: null` on the wire, pod spec defaults."""
    if not isinstance(template, dict):
        return
    _structs(template, "metadata", "spec")
    md = _dict(template, "metadata")
    if md is not None and "creationTimestamp" not in md:
        md["creationTimestamp"] = None
    spec = _dict(template, "spec")
    if spec is not None:
        default_pod_spec(spec)


def _workload(obj: Obj) -> Obj | None:
    """The spec of a workload (with its template defaulted); `status: {}` is always sent."""
    _structs(obj, "spec", "status")
    spec = _dict(obj, "spec")
    if spec is not None:
        _default_pod_template(spec.get("template"))
    return spec


def _setdefault(obj: Obj, key: str, value: Any) -> None:
    if obj.get(key) is None:
        obj[key] = value


def _rolling(strategy: Obj, **values: Any) -> None:
    _structs(strategy, "rollingUpdate")
    rolling = _dict(strategy, "rollingUpdate")
    if rolling is not None:
        for key, value in values.items():
            _setdefault(rolling, key, value)


def default_deployment(obj: Obj) -> None:
    spec = _workload(obj)
    if spec is None:
        return
    _setdefault(spec, "replicas", 1)
    _structs(spec, "strategy")
    strategy = _dict(spec, "strategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            _rolling(strategy, maxUnavailable="25%", maxSurge="25%")
    _setdefault(spec, "revisionHistoryLimit", 10)
    _setdefault(spec, "progressDeadlineSeconds", 600)


def default_replica_set(obj: Obj) -> None:
    spec = _workload(obj)
    if spec is not None:
        _setdefault(spec, "replicas", 1)


def default_replication_controller(obj: Obj) -> None:
    """SetDefaults_ReplicationController: an empty selector, and the controller's own labels
    when it has none, become the template's labels; one replica."""
    spec = _workload(obj)
    if spec is None:
        return
    template = _dict(spec, "template")
    template_md = _dict(template, "metadata") if template is not None else None
    labels = _dict(template_md, "labels") if template_md is not None else None
    if labels is not None:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        md = _dict(obj, "metadata")
        if md is not None and not md.get("labels"):
            md["labels"] = dict(labels)
    _setdefault(spec, "replicas", 1)


def default_stateful_set(obj: Obj) -> None:
    spec = _workload(obj)
    if spec is None:
        return
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    _structs(spec, "updateStrategy")
    strategy = _dict(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            _rolling(strategy, partition=0)
    _structs(spec, "persistentVolumeClaimRetentionPolicy")
    retention = _dict(spec, "persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        for key in ("whenDeleted", "whenScaled"):
            if not retention.get(key):
                retention[key] = "Retain"
    _setdefault(spec, "replicas", 1)
    _setdefault(spec, "revisionHistoryLimit", 10)


def default_daemon_set(obj: Obj) -> None:
    spec = _workload(obj)
    if spec is None:
        return
    _structs(spec, "updateStrategy")
    strategy = _dict(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            _rolling(strategy, maxUnavailable=1, maxSurge=0)
    _setdefault(spec, "revisionHistoryLimit", 10)


def default_job_spec(spec: Obj) -> None:
    """SetDefaults_Job's spec part (1.34: podReplacementPolicy and manualSelector too)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _setdefault(spec, "parallelism", 1)
    per_index = spec.get("backoffLimitPerIndex") is not None
    _setdefault(spec, "backoffLimit", 2**31 - 1 if per_index else 6)
    _setdefault(spec, "completionMode", "NonIndexed")
    _setdefault(spec, "suspend", False)
    policy = _dict(spec, "podFailurePolicy")
    if policy is not None:
        for rule in policy.get("rules") or []:
            for pattern in (rule.get("onPodConditions") or []) if isinstance(rule, dict) else []:
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"
    _setdefault(
        spec, "podReplacementPolicy", "Failed" if policy is not None else "TerminatingOrFailed"
    )
    _setdefault(spec, "manualSelector", False)


def default_job(obj: Obj) -> None:
    spec = _workload(obj)
    if spec is None:
        return
    default_job_spec(spec)
    copy_template_labels(obj)


def copy_template_labels(obj: Obj) -> None:
    """A Job without labels takes its template's labels."""
    md = _dict(obj, "metadata")
    spec = _dict(obj, "spec")
    template = _dict(spec, "template") if spec is not None else None
    template_md = _dict(template, "metadata") if template is not None else None
    labels = template_md.get("labels") if template_md is not None else None
    if md is not None and isinstance(labels, dict) and not md.get("labels"):
        md["labels"] = dict(labels)


def default_cron_job(obj: Obj) -> None:
    _structs(obj, "spec", "status")
    spec = _dict(obj, "spec")
    if spec is None:
        return
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    _setdefault(spec, "suspend", False)
    _setdefault(spec, "successfulJobsHistoryLimit", 3)
    _setdefault(spec, "failedJobsHistoryLimit", 1)
    _structs(spec, "jobTemplate")
    job_template = _dict(spec, "jobTemplate")
    if job_template is not None:
        _structs(job_template, "metadata", "spec")
        md = _dict(job_template, "metadata")
        if md is not None and "creationTimestamp" not in md:
            md["creationTimestamp"] = None
        job_spec = _dict(job_template, "spec")
        if job_spec is not None:
            _default_pod_template(job_spec.get("template"))


def default_controller_revision(obj: Obj) -> None:
    _setdefault(obj, "revision", 0)
