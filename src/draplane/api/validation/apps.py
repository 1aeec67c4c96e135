"""apps/v1 rules: Deployment, ReplicaSet, StatefulSet, DaemonSet and ControllerRevision
(pkg/apis/apps/validation/validation.go): create, update (immutable selectors, the StatefulSet
spec fields that may change) and `status` updates.
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import (
    as_dict,
    immutable,
    semantic_equal,
    shown,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.podtemplate import (
    int_or_percent_value,
    is_int,
    nonnegative,
    not_more_than_100_percent,
    positive_int_or_percent,
    restart_always,
    selector_matches_template,
    template_for_replicas,
    template_spec,
    validate_pod_template,
    validate_selector,
)


def _meta(obj: Obj) -> list[FieldError]:
    return validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )


def _spec(obj: Obj, errs: list[FieldError]) -> Obj:
    return as_dict(obj.get("spec"), "spec", errs)


def _nonnegative_fields(spec: Obj, path: str, *fields: str) -> list[FieldError]:
    return [e for f in fields for e in nonnegative(spec.get(f), f"{path}.{f}")]


def _update_meta(obj: Obj, old: Obj) -> list[FieldError]:
    return validate_object_meta_update(obj["metadata"], old.get("metadata") or {})


def _selector_immutable(obj: Obj, old: Obj) -> list[FieldError]:
    new_sel = (obj.get("spec") or {}).get("selector")
    old_sel = (old.get("spec") or {}).get("selector")
    return immutable("spec.selector", new_sel, old_sel)


# Deployment -------------------------------------------------------------------------------------


def _deployment_strategy(strategy: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    strategy = as_dict(strategy, path, errs)
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            errs.append(
                forbidden(
                    f"{path}.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            )
    elif kind == "RollingUpdate":
        if rolling is None:
            errs.append(
                required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")
            )
        else:
            rolling = as_dict(rolling, f"{path}.rollingUpdate", errs)
            p = f"{path}.rollingUpdate"
            unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
            errs.extend(positive_int_or_percent(unavailable, f"{p}.maxUnavailable"))
            errs.extend(positive_int_or_percent(surge, f"{p}.maxSurge"))
            if int_or_percent_value(unavailable) == 0 and int_or_percent_value(surge) == 0:
                errs.append(
                    invalid(f"{p}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
                )
            errs.extend(not_more_than_100_percent(unavailable, f"{p}.maxUnavailable"))
    else:
        errs.append(not_supported(path, shown(strategy), ["Recreate", "RollingUpdate"]))
    return errs


def _deployment_spec(spec: Obj) -> list[FieldError]:
    errs = _nonnegative_fields(spec, "spec", "replicas")
    errs.extend(validate_selector(spec.get("selector"), "spec.selector", "deployment"))
    errs.extend(template_for_replicas(spec.get("selector"), spec.get("template"), "spec.template"))
    errs.extend(_deployment_strategy(spec.get("strategy"), "spec.strategy"))
    errs.extend(_nonnegative_fields(spec, "spec", "minReadySeconds", "revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if is_int(deadline):
        errs.extend(nonnegative(deadline, "spec.progressDeadlineSeconds"))
        min_ready = spec.get("minReadySeconds")
        if deadline <= (min_ready if is_int(min_ready) else 0):
            errs.append(
                invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    return errs


def validate_deployment(obj: Obj) -> list[FieldError]:
    errs = _meta(obj)
    errs.extend(_deployment_spec(_spec(obj, errs)))
    return errs


def validate_deployment_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = _update_meta(obj, old)
    errs.extend(_deployment_spec(_spec(obj, errs)))
    errs.extend(_selector_immutable(obj, old))
    return errs


def _replica_counts(
    status: Obj, counted: tuple[str, ...], nonneg: tuple[str, ...]
) -> list[FieldError]:
    """Non-negative counters; each of `counted` at most status.replicas, available at most
    ready."""
    errs = _nonnegative_fields(status, "status", *nonneg)
    count = status.get("replicas")
    replicas = count if is_int(count) else 0
    for field in counted:
        value = status.get(field)
        if is_int(value) and value > replicas:
            errs.append(invalid(f"status.{field}", value, "cannot be greater than status.replicas"))
    available, ready = status.get("availableReplicas"), status.get("readyReplicas")
    if is_int(available) and available > (ready if is_int(ready) else 0):
        errs.append(
            invalid("status.availableReplicas", available, "cannot be greater than readyReplicas")
        )
    return errs


def _status_update(obj: Obj, old: Obj) -> tuple[list[FieldError], Obj]:
    errs = _update_meta(obj, old)
    errs.extend(validate_meta_content(obj["metadata"]))
    return errs, as_dict(obj.get("status"), "status", errs)


def validate_deployment_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs, status = _status_update(obj, old)
    errs.extend(
        _replica_counts(
            status,
            ("updatedReplicas", "readyReplicas", "availableReplicas"),
            (
                "observedGeneration",
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
                "unavailableReplicas",
                "terminatingReplicas",
                "collisionCount",
            ),
        )
    )
    return errs


# ReplicaSet -------------------------------------------------------------------------------------


def _replica_set_spec(spec: Obj) -> list[FieldError]:
    errs = _nonnegative_fields(spec, "spec", "replicas", "minReadySeconds")
    # Upstream's message names deployments for ReplicaSets too.
    errs.extend(validate_selector(spec.get("selector"), "spec.selector", "deployment"))
    errs.extend(template_for_replicas(spec.get("selector"), spec.get("template"), "spec.template"))
    return errs


def validate_replica_set(obj: Obj) -> list[FieldError]:
    errs = _meta(obj)
    errs.extend(_replica_set_spec(_spec(obj, errs)))
    return errs


def validate_replica_set_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = _update_meta(obj, old)
    errs.extend(_replica_set_spec(_spec(obj, errs)))
    errs.extend(_selector_immutable(obj, old))
    return errs


def validate_replica_set_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs, status = _status_update(obj, old)
    errs.extend(
        _replica_counts(
            status,
            ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
            (
                "replicas",
                "fullyLabeledReplicas",
                "readyReplicas",
                "availableReplicas",
                "terminatingReplicas",
                "observedGeneration",
            ),
        )
    )
    return errs


# StatefulSet ------------------------------------------------------------------------------------

_POD_MANAGEMENT = ("OrderedReady", "Parallel")
_RETENTION = ["Retain", "Delete"]
STATEFUL_SET_MUTABLE = (
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
)


def _update_strategy(strategy: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    strategy = as_dict(strategy, path, errs)
    kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    if not kind:
        errs.append(required(path, ""))
    elif kind == "OnDelete":
        if rolling is not None:
            errs.append(
                invalid(
                    f"{path}.rollingUpdate",
                    shown(rolling),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            )
    elif kind == "RollingUpdate":
        if rolling is not None:
            rolling = as_dict(rolling, f"{path}.rollingUpdate", errs)
            errs.extend(nonnegative(rolling.get("partition"), f"{path}.rollingUpdate.partition"))
    else:
        errs.append(invalid(path, shown(strategy), "must be 'RollingUpdate' or 'OnDelete'"))
    return errs


def _retention_policy(policy: Any, path: str) -> list[FieldError]:
    if policy is None:
        return []
    errs: list[FieldError] = []
    policy = as_dict(policy, path, errs)
    for field in ("whenDeleted", "whenScaled"):
        value = policy.get(field)
        if value not in _RETENTION:
            errs.append(not_supported(f"{path}.{field}", value or "", _RETENTION))
    return errs


def _claim_templates(templates: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if templates is None:
        return errs
    if not isinstance(templates, list):
        return [invalid(path, shown(templates), "must be a list")]
    for i, tmpl in enumerate(templates):
        p = f"{path}[{i}]"
        tmpl = as_dict(tmpl, p, errs)
        md = as_dict(tmpl.get("metadata"), f"{p}.metadata", errs)
        name = md.get("name")
        if not name:
            errs.append(required(f"{p}.metadata.name", "name or generateName is required"))
        elif isinstance(name, str):
            errs.extend(
                invalid(f"{p}.metadata.name", name, m) for m in names.name_is_dns_subdomain(name)
            )
    return errs


def _stateful_set_spec(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        errs.append(required("spec.podManagementPolicy", ""))
    elif policy not in _POD_MANAGEMENT:
        errs.append(
            invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    errs.extend(_update_strategy(spec.get("updateStrategy"), "spec.updateStrategy"))
    errs.extend(_nonnegative_fields(spec, "spec", "revisionHistoryLimit"))
    errs.extend(
        _retention_policy(
            spec.get("persistentVolumeClaimRetentionPolicy"),
            "spec.persistentVolumeClaimRetentionPolicy",
        )
    )
    errs.extend(_nonnegative_fields(spec, "spec", "replicas"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs.extend(nonnegative(ordinals.get("start"), "spec.ordinals.start"))
    errs.extend(_nonnegative_fields(spec, "spec", "minReadySeconds"))
    service = spec.get("serviceName")
    if isinstance(service, str) and service:
        errs.extend(
            invalid("spec.serviceName", service, m) for m in names.name_is_dns_label(service)
        )
    errs.extend(validate_selector(spec.get("selector"), "spec.selector", "statefulset"))
    template = spec.get("template")
    errs.extend(selector_matches_template(spec.get("selector"), template, "spec.template"))
    errs.extend(validate_pod_template(template, "spec.template"))
    errs.extend(restart_always(template, "spec.template"))
    if template_spec(template).get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in StatefulSet is not Supported",
            )
        )
    errs.extend(_claim_templates(spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates"))
    return errs


def validate_stateful_set(obj: Obj) -> list[FieldError]:
    errs = _meta(obj)
    errs.extend(_stateful_set_spec(_spec(obj, errs)))
    return errs


def validate_stateful_set_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = _update_meta(obj, old)
    spec = _spec(obj, errs)
    errs.extend(_stateful_set_spec(spec))
    old_spec = old.get("spec") or {}
    rest = {k: v for k, v in spec.items() if k not in STATEFUL_SET_MUTABLE}
    old_rest = {k: v for k, v in old_spec.items() if k not in STATEFUL_SET_MUTABLE}
    if not semantic_equal(rest, old_rest):
        errs.append(
            forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                "'minReadySeconds' are forbidden",
            )
        )
    return errs


def validate_stateful_set_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs, status = _status_update(obj, old)
    errs.extend(
        _nonnegative_fields(
            status,
            "status",
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "observedGeneration",
            "collisionCount",
        )
    )
    count = status.get("replicas")
    replicas = count if is_int(count) else 0
    for field in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        value = status.get(field)
        if is_int(value) and value > replicas:
            errs.append(invalid(f"status.{field}", value, "cannot be greater than status.replicas"))
    available, ready = status.get("availableReplicas"), status.get("readyReplicas")
    if is_int(available) and available > (ready if is_int(ready) else 0):
        errs.append(
            invalid(
                "status.availableReplicas", available, "cannot be greater than status.readyReplicas"
            )
        )
    return errs


# DaemonSet --------------------------------------------------------------------------------------


def _daemon_set_strategy(strategy: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    strategy = as_dict(strategy, path, errs)
    kind = strategy.get("type")
    if kind == "OnDelete":
        return errs
    if kind != "RollingUpdate":
        return [*errs, not_supported(path, shown(strategy), ["RollingUpdate", "OnDelete"])]
    rolling = strategy.get("rollingUpdate")
    p = f"{path}.rollingUpdate"
    if rolling is None:
        return [*errs, required(p, "")]
    rolling = as_dict(rolling, p, errs)
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs.extend(positive_int_or_percent(unavailable, f"{p}.maxUnavailable"))
    errs.extend(positive_int_or_percent(surge, f"{p}.maxSurge"))
    errs.extend(not_more_than_100_percent(unavailable, f"{p}.maxUnavailable"))
    errs.extend(not_more_than_100_percent(surge, f"{p}.maxSurge"))
    has_unavailable = int_or_percent_value(unavailable) != 0
    has_surge = int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        errs.append(
            invalid(f"{p}.maxSurge", surge, "may not be set when maxUnavailable is non-zero")
        )
    elif not has_unavailable and not has_surge:
        errs.append(required(f"{p}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def _daemon_set_spec(spec: Obj) -> list[FieldError]:
    errs = validate_selector(spec.get("selector"), "spec.selector", "daemonset")
    template = spec.get("template")
    errs.extend(selector_matches_template(spec.get("selector"), template, "spec.template"))
    errs.extend(validate_pod_template(template, "spec.template"))
    errs.extend(restart_always(template, "spec.template"))
    deadline = template_spec(template).get("activeDeadlineSeconds")
    if deadline is not None:
        errs.append(
            invalid(
                "spec.template.spec.activeDeadlineSeconds",
                deadline,
                "activeDeadlineSeconds must be nil for daemonset",
            )
        )
    errs.extend(_nonnegative_fields(spec, "spec", "minReadySeconds", "templateGeneration"))
    errs.extend(_daemon_set_strategy(spec.get("updateStrategy"), "spec.updateStrategy"))
    errs.extend(_nonnegative_fields(spec, "spec", "revisionHistoryLimit"))
    return errs


def validate_daemon_set(obj: Obj) -> list[FieldError]:
    errs = _meta(obj)
    errs.extend(_daemon_set_spec(_spec(obj, errs)))
    return errs


def validate_daemon_set_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = _update_meta(obj, old)
    errs.extend(_daemon_set_spec(_spec(obj, errs)))
    errs.extend(_selector_immutable(obj, old))
    return errs


def validate_daemon_set_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs, status = _status_update(obj, old)
    errs.extend(
        _nonnegative_fields(
            status,
            "status",
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        )
    )
    return errs


# ControllerRevision -----------------------------------------------------------------------------


def validate_controller_revision(obj: Obj) -> list[FieldError]:
    errs = _meta(obj)
    if obj.get("data") is None:
        errs.append(required("data", "data is mandatory"))
    errs.extend(nonnegative(obj.get("revision"), "revision"))
    return errs


def validate_controller_revision_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = _update_meta(obj, old)
    errs.extend(validate_controller_revision(obj))
    errs.extend(immutable("data", obj.get("data"), old.get("data")))
    return errs
