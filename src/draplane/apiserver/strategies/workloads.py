"""Declarations of the apps/v1 and batch/v1 kinds and core/v1 ReplicationControllers
(pkg/registry/apps/*, pkg/registry/batch/*, pkg/registry/core/replicationcontroller).

Create resets `status` (`{}` on the wire); DaemonSets count template changes in the
`deprecated.daemonset.template.generation` annotation; Jobs get their generated selector and
labels (unless `manualSelector`) and, without a propagationPolicy, DELETE orphans their pods.
Deployment annotation changes bump `metadata.generation` like spec changes (annotations are
copied to ReplicaSets). DELETE answers with a Status for all of them. Status counters Go
encodes without omitempty (ReplicaSet and StatefulSet `replicas`, the DaemonSet node counts)
are always present.
"""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.api.validation import apps, batch, cronjob, defaults, replication, statefulset
from draplane.api.validation.batch import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from draplane.apiserver import workloadprinters
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.strategies.scale import REPLICAS

TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _reset_status(obj: Obj) -> None:
    obj["status"] = {}


def _prepare_daemon_set(obj: Obj) -> None:
    obj["status"] = {}
    md = obj["metadata"]
    annotations = md.get("annotations")
    if not isinstance(annotations, dict):
        annotations = md["annotations"] = {}
    annotations[TEMPLATE_GENERATION] = "1"


def _update_daemon_set(new: Obj, old: Obj) -> None:
    """A changed template bumps the template generation (kept through updates)."""
    old_annotations = (old.get("metadata") or {}).get("annotations") or {}
    try:
        generation = int(old_annotations.get(TEMPLATE_GENERATION, "1"))
    except (TypeError, ValueError):
        generation = 1
    new_template = (new.get("spec") or {}).get("template")
    if new_template != (old.get("spec") or {}).get("template"):
        generation += 1
    md = new.setdefault("metadata", {})
    annotations = md.get("annotations")
    if not isinstance(annotations, dict):
        annotations = md["annotations"] = {}
    annotations[TEMPLATE_GENERATION] = str(generation)


def generate_job_selector(obj: Obj) -> None:
    """generateSelector: job-name and controller-uid labels on the template (unless the user set
    them) and `matchLabels` on batch.kubernetes.io/controller-uid."""
    md = obj["metadata"]
    spec = obj.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    template = spec.get("template")
    if not isinstance(template, dict):
        template = spec["template"] = {}
    template_md = template.get("metadata")
    if not isinstance(template_md, dict):
        template_md = template["metadata"] = {}
    labels = template_md.get("labels")
    if not isinstance(labels, dict):
        labels = template_md["labels"] = {}
    name, uid = md.get("name") or "", md.get("uid") or ""
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID_LABEL, uid)


def _labels(obj: Obj) -> object:
    md = obj.get("metadata") or {}
    return md.get("labels")


def _template_labels(obj: Obj) -> object:
    template = (obj.get("spec") or {}).get("template")
    md = template.get("metadata") if isinstance(template, dict) else None
    return md.get("labels") if isinstance(md, dict) else None


def _prepare_job(obj: Obj) -> None:
    obj["status"] = {}
    # Defaulting gave a Job without labels its template's labels; upstream they are the same
    # map, so the generated template labels show in the Job's labels too.
    shared = not _labels(obj) or _labels(obj) == _template_labels(obj)
    generate_job_selector(obj)
    labels = _template_labels(obj)
    if shared and isinstance(labels, dict):
        obj["metadata"]["labels"] = dict(labels)


STRATEGIES = (
    ResourceStrategy(
        kinds.DEPLOYMENTS,
        validate_typed=apps.validate_deployment,
        validate_update_typed=apps.validate_deployment_update,
        validate_status=apps.validate_deployment_status_update,
        defaults=defaults.default_deployment,
        printer=workloadprinters.DEPLOYMENT,
        prepare_for_create=_reset_status,
        generation_on_annotations=True,
        status_writes_annotations=True,
        scale=REPLICAS,
    ),
    ResourceStrategy(
        kinds.REPLICA_SETS,
        validate_typed=apps.validate_replica_set,
        validate_update_typed=apps.validate_replica_set_update,
        validate_status=apps.validate_replica_set_status_update,
        defaults=defaults.default_replica_set,
        printer=workloadprinters.REPLICA_SET,
        prepare_for_create=_reset_status,
        status_zeros=("replicas",),
        scale=REPLICAS,
    ),
    ResourceStrategy(
        kinds.REPLICATION_CONTROLLERS,
        validate_typed=replication.validate_replication_controller,
        validate_update_typed=replication.validate_replication_controller_update,
        validate_status=replication.validate_replication_controller_status_update,
        defaults=defaults.default_replication_controller,
        printer=workloadprinters.REPLICATION_CONTROLLER,
        prepare_for_create=_reset_status,
        status_zeros=("replicas",),
        scale=REPLICAS,
    ),
    ResourceStrategy(
        kinds.STATEFUL_SETS,
        validate_typed=statefulset.validate_stateful_set,
        validate_update_typed=statefulset.validate_stateful_set_update,
        validate_status=statefulset.validate_stateful_set_status_update,
        defaults=defaults.default_stateful_set,
        printer=workloadprinters.STATEFUL_SET,
        prepare_for_create=_reset_status,
        status_zeros=("replicas", "availableReplicas"),
        scale=REPLICAS,
    ),
    ResourceStrategy(
        kinds.DAEMON_SETS,
        validate_typed=statefulset.validate_daemon_set,
        validate_update_typed=statefulset.validate_daemon_set_update,
        validate_status=statefulset.validate_daemon_set_status_update,
        defaults=defaults.default_daemon_set,
        printer=workloadprinters.DAEMON_SET,
        prepare_for_create=_prepare_daemon_set,
        prepare_for_update=_update_daemon_set,
        status_zeros=(
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
        ),
    ),
    ResourceStrategy(
        kinds.CONTROLLER_REVISIONS,
        validate=statefulset.validate_controller_revision,
        validate_update=statefulset.validate_controller_revision_update,
        defaults=defaults.default_controller_revision,
        printer=workloadprinters.CONTROLLER_REVISION,
    ),
    ResourceStrategy(
        kinds.JOBS,
        validate_typed=batch.validate_job,
        validate_update_typed=batch.validate_job_update,
        validate_status=batch.validate_job_status_update,
        defaults=defaults.default_job,
        printer=workloadprinters.JOB,
        prepare_for_create=_prepare_job,
        default_propagation="Orphan",
    ),
    ResourceStrategy(
        kinds.CRON_JOBS,
        validate_typed=cronjob.validate_cron_job,
        validate_update_typed=cronjob.validate_cron_job_update,
        validate_status=cronjob.validate_cron_job_status_update,
        defaults=defaults.default_cron_job,
        printer=workloadprinters.CRON_JOB,
        prepare_for_create=_reset_status,
    ),
)
