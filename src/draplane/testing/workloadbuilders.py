"""Builders of the apps/v1 and batch/v1 kinds: `make_deployment("web").replicas(3).obj()`.

Each workload starts valid: selector `app=<name>` matching its template labels, one container
`ctr` (pause image), the restartPolicy its kind needs. Template setters (`image`,
`template_label`, `claim_template`, `node_selector`, ...) edit the pod template (for CronJobs
the job template's). core/v1 ReplicationControllers (a label-map selector) and policy/v1
PodDisruptionBudgets over a workload's pods are built here too. `from_workload(obj)` starts
from an existing object. Re-exported by `draplane.testing.builders`.
"""

from __future__ import annotations

from typing import Any, Self

from draplane.api import versions
from draplane.api.meta import Obj, deep_copy
from draplane.dra.claims import pod_resource_claim
from draplane.testing.basebuilder import _Builder, _uid

PAUSE = "registry.k8s.io/pause:3.9"


def _template(labels: dict[str, str], restart_policy: str | None) -> Obj:
    spec: Obj = {"containers": [{"name": "ctr", "image": PAUSE}]}
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    return {"metadata": {"labels": dict(labels)}, "spec": spec}


class WorkloadBuilder(_Builder):
    """A Deployment, ReplicaSet, StatefulSet, DaemonSet, Job or CronJob."""

    @property
    def _spec(self) -> Obj:
        spec: Obj = self._obj.setdefault("spec", {})
        return spec

    @property
    def _pod_template(self) -> Obj:
        if self._obj.get("kind") == "CronJob":
            job_spec = self._spec.setdefault("jobTemplate", {}).setdefault("spec", {})
            template: Obj = job_spec.setdefault("template", {})
            return template
        template = self._spec.setdefault("template", {})
        return template

    @property
    def _pod_spec(self) -> Obj:
        spec: Obj = self._pod_template.setdefault("spec", {})
        return spec

    # --- the workload ---------------------------------------------------------------------
    def replicas(self, value: int) -> Self:
        self._spec["replicas"] = value
        return self

    def selector(self, match_labels: dict[str, str] | None = None, **expressions: Any) -> Self:
        """`matchLabels` (None drops the selector); `match_expressions=[...]` adds those."""
        if match_labels is None and not expressions:
            self._spec.pop("selector", None)
            return self
        selector: Obj = {}
        if match_labels is not None:
            selector["matchLabels"] = dict(match_labels)
        if "match_expressions" in expressions:
            selector["matchExpressions"] = list(expressions["match_expressions"])
        self._spec["selector"] = selector
        return self

    def min_ready_seconds(self, value: int) -> Self:
        self._spec["minReadySeconds"] = value
        return self

    def revision_history_limit(self, value: int) -> Self:
        self._spec["revisionHistoryLimit"] = value
        return self

    def paused(self, value: bool = True) -> Self:
        self._spec["paused"] = value
        return self

    def strategy(self, type_: str, **rolling: Any) -> Self:
        """Deployment `strategy` (Recreate, or RollingUpdate with maxSurge/maxUnavailable)."""
        strategy: Obj = {"type": type_}
        if rolling:
            strategy["rollingUpdate"] = dict(rolling)
        self._spec["strategy"] = strategy
        return self

    def update_strategy(self, type_: str, **rolling: Any) -> Self:
        """StatefulSet/DaemonSet `updateStrategy` (`partition=`, `maxUnavailable=` ...)."""
        strategy: Obj = {"type": type_}
        if rolling:
            strategy["rollingUpdate"] = dict(rolling)
        self._spec["updateStrategy"] = strategy
        return self

    def service_name(self, value: str) -> Self:
        self._spec["serviceName"] = value
        return self

    def pod_management_policy(self, value: str) -> Self:
        self._spec["podManagementPolicy"] = value
        return self

    def volume_claim_template(self, name: str, storage: str = "1Gi") -> Self:
        self._spec.setdefault("volumeClaimTemplates", []).append(
            {
                "metadata": {"name": name},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": storage}},
                },
            }
        )
        return self

    # Jobs
    def completions(self, value: int | None) -> Self:
        self._job_spec["completions"] = value
        return self

    def parallelism(self, value: int | None) -> Self:
        self._job_spec["parallelism"] = value
        return self

    def backoff_limit(self, value: int) -> Self:
        self._job_spec["backoffLimit"] = value
        return self

    def completion_mode(self, value: str) -> Self:
        self._job_spec["completionMode"] = value
        return self

    def active_deadline_seconds(self, value: int) -> Self:
        self._job_spec["activeDeadlineSeconds"] = value
        return self

    def ttl_seconds_after_finished(self, value: int) -> Self:
        self._job_spec["ttlSecondsAfterFinished"] = value
        return self

    def pod_failure_policy(self, *rules: Obj) -> Self:
        self._job_spec["podFailurePolicy"] = {"rules": list(rules)}
        return self

    def suspend(self, value: bool = True) -> Self:
        self._spec["suspend"] = value
        return self

    @property
    def _job_spec(self) -> Obj:
        if self._obj.get("kind") == "CronJob":
            spec: Obj = self._spec.setdefault("jobTemplate", {}).setdefault("spec", {})
            return spec
        return self._spec

    # CronJobs
    def schedule(self, value: str) -> Self:
        self._spec["schedule"] = value
        return self

    def time_zone(self, value: str) -> Self:
        self._spec["timeZone"] = value
        return self

    def concurrency_policy(self, value: str) -> Self:
        self._spec["concurrencyPolicy"] = value
        return self

    def starting_deadline_seconds(self, value: int) -> Self:
        self._spec["startingDeadlineSeconds"] = value
        return self

    def history_limits(self, successful: int, failed: int) -> Self:
        self._spec["successfulJobsHistoryLimit"] = successful
        self._spec["failedJobsHistoryLimit"] = failed
        return self

    # --- the pod template -----------------------------------------------------------------
    def template_label(self, key: str, value: str) -> Self:
        self._pod_template.setdefault("metadata", {}).setdefault("labels", {})[key] = value
        return self

    def template_labels(self, labels: dict[str, str] | None) -> Self:
        md = self._pod_template.setdefault("metadata", {})
        if labels is None:
            md.pop("labels", None)
        else:
            md["labels"] = dict(labels)
        return self

    def template_annotation(self, key: str, value: str) -> Self:
        md = self._pod_template.setdefault("metadata", {})
        md.setdefault("annotations", {})[key] = value
        return self

    def image(self, value: str, container: int = 0) -> Self:
        self._pod_spec["containers"][container]["image"] = value
        return self

    def container(self, name: str, image: str = PAUSE) -> Self:
        self._pod_spec.setdefault("containers", []).append({"name": name, "image": image})
        return self

    def restart_policy(self, value: str | None) -> Self:
        if value is None:
            self._pod_spec.pop("restartPolicy", None)
        else:
            self._pod_spec["restartPolicy"] = value
        return self

    def node_selector(self, selector: dict[str, str]) -> Self:
        self._pod_spec["nodeSelector"] = dict(selector)
        return self

    def pod_spec(self, key: str, value: Any) -> Self:
        """Any field of the template's pod spec."""
        self._pod_spec[key] = value
        return self

    def requests(self, **resources: str) -> Self:
        container = self._pod_spec["containers"][0]
        container.setdefault("resources", {}).setdefault("requests", {}).update(resources)
        return self

    def claim_template(
        self, pod_claim_name: str, template: str, *, mode: versions.Mode = versions.CLASSIC
    ) -> Self:
        """A pod claim from the ResourceClaimTemplate `template`, used by the first container,
        in `mode`'s shape (`PodBuilder.claim_template`)."""
        self._pod_spec.setdefault("resourceClaims", []).append(
            pod_resource_claim(
                pod_claim_name,
                template_name=template,
                mode=mode,
            )
        )
        container = self._pod_spec["containers"][0]
        container.setdefault("resources", {}).setdefault("claims", []).append(
            {"name": pod_claim_name}
        )
        return self

    def claim_ref(
        self, pod_claim_name: str, claim: str, *, mode: versions.Mode = versions.CLASSIC
    ) -> Self:
        """A pod claim naming the ResourceClaim `claim`, used by the first container
        (`mode` as `claim_template`)."""
        self._pod_spec.setdefault("resourceClaims", []).append(
            pod_resource_claim(
                pod_claim_name,
                claim_name=claim,
                mode=mode,
            )
        )
        container = self._pod_spec["containers"][0]
        container.setdefault("resources", {}).setdefault("claims", []).append(
            {"name": pod_claim_name}
        )
        return self

    # --- status (for tests that seed stored objects) ---------------------------------------
    def status(self, **fields: Any) -> Self:
        self._obj.setdefault("status", {}).update(fields)
        return self


def _workload(
    api_version: str,
    kind: str,
    name: str,
    namespace: str,
    restart_policy: str | None,
    *,
    selector: bool = True,
) -> WorkloadBuilder:
    labels = {"app": name}
    spec: Obj = {"template": _template(labels, restart_policy)}
    if selector:
        spec = {"selector": {"matchLabels": dict(labels)}, **spec}
    return WorkloadBuilder(
        {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": spec,
        }
    )


def make_deployment(name: str = "web", namespace: str = "default") -> WorkloadBuilder:
    return _workload("apps/v1", "Deployment", name, namespace, None)


def make_replica_set(name: str = "web", namespace: str = "default") -> WorkloadBuilder:
    return _workload("apps/v1", "ReplicaSet", name, namespace, None)


def make_stateful_set(name: str = "web", namespace: str = "default") -> WorkloadBuilder:
    builder = _workload("apps/v1", "StatefulSet", name, namespace, None)
    return builder.service_name(name)


def make_daemon_set(name: str = "agent", namespace: str = "default") -> WorkloadBuilder:
    return _workload("apps/v1", "DaemonSet", name, namespace, None)


def make_job(name: str = "task", namespace: str = "default") -> WorkloadBuilder:
    """A Job with a generated selector (none set), template label `app=<name>`,
    restartPolicy Never."""
    return _workload("batch/v1", "Job", name, namespace, "Never", selector=False)


def make_cron_job(
    name: str = "nightly", namespace: str = "default", schedule: str = "*/5 * * * *"
) -> WorkloadBuilder:
    job_spec: Obj = {"template": _template({"app": name}, "OnFailure")}
    return WorkloadBuilder(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": job_spec}},
        }
    )


def make_controller_revision(
    name: str = "web-1", namespace: str = "default", revision: int = 1
) -> WorkloadBuilder:
    return WorkloadBuilder(
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "data": {"spec": {"template": {"$patch": "replace"}}},
            "revision": revision,
        }
    )


class ReplicationControllerBuilder(WorkloadBuilder):
    """A core/v1 ReplicationController: its selector is a label map, not a LabelSelector."""

    def selector(self, match_labels: dict[str, str] | None = None, **expressions: Any) -> Self:
        if match_labels is None:
            self._spec.pop("selector", None)
        else:
            self._spec["selector"] = dict(match_labels)
        return self


def make_replication_controller(
    name: str = "web", namespace: str = "default"
) -> ReplicationControllerBuilder:
    """Selector `app=<name>` matching the template's labels, restartPolicy Always."""
    return ReplicationControllerBuilder(
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {"selector": {"app": name}, "template": _template({"app": name}, None)},
        }
    )


def make_pod_disruption_budget(
    name: str = "web", namespace: str = "default", min_available: int | str | None = 1
) -> WorkloadBuilder:
    """A policy/v1 PodDisruptionBudget over the pods labelled `app=<name>` (setters:
    `selector`, `set("spec.maxUnavailable", ...)`)."""
    spec: Obj = {"selector": {"matchLabels": {"app": name}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    return WorkloadBuilder(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        }
    )


def from_workload(obj: Obj) -> WorkloadBuilder:
    return WorkloadBuilder(deep_copy(obj))
