"""apps/v1 rules for StatefulSets, DaemonSets and ControllerRevisions
(pkg/apis/apps/validation/validation.go): create, update (the StatefulSet spec fields that may
change, immutable DaemonSet selectors, immutable revision data) and `status` updates.
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation.apps import (
    create_meta,
    nonnegative_fields,
    selector_spec_validators,
    spec_of,
    status_update,
    update_meta,
)
from draplane.api.validation.objectmeta import as_dict, immutable, semantic_equal, shown
from draplane.api.validation.podtemplate import (
    int_or_percent_value,
    is_int,
    nonnegative,
    not_more_than_100_percent,
    positive_int_or_percent,
    restart_always,
    selector_matches_template,
    template_spec,
    validate_pod_template,
    validate_selector,
)

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


def _stateful_set_spec(spec: Obj, schemas: Schemas) -> list[FieldError]:
    errs: list[FieldError] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        errs.append(required("spec.podManagementPolicy", ""))
    elif policy not in _POD_MANAGEMENT:
        errs.append(
            invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    errs.extend(_update_strategy(spec.get("updateStrategy"), "spec.updateStrategy"))
    errs.extend(nonnegative_fields(spec, "spec", "revisionHistoryLimit"))
    errs.extend(
        _retention_policy(
            spec.get("persistentVolumeClaimRetentionPolicy"),
            "spec.persistentVolumeClaimRetentionPolicy",
        )
    )
    errs.extend(nonnegative_fields(spec, "spec", "replicas"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs.extend(nonnegative(ordinals.get("start"), "spec.ordinals.start"))
    errs.extend(nonnegative_fields(spec, "spec", "minReadySeconds"))
    service = spec.get("serviceName")
    if isinstance(service, str) and service:
        errs.extend(
            invalid("spec.serviceName", service, m) for m in names.name_is_dns_label(service)
        )
    errs.extend(validate_selector(spec.get("selector"), "spec.selector", "statefulset"))
    template = spec.get("template")
    errs.extend(selector_matches_template(spec.get("selector"), template, "spec.template"))
    errs.extend(validate_pod_template(template, "spec.template", schemas))
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


def validate_stateful_set(obj: Obj, schemas: Schemas) -> list[FieldError]:
    errs = create_meta(obj)
    errs.extend(_stateful_set_spec(spec_of(obj, errs), schemas))
    return errs


def validate_stateful_set_update(obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
    errs = update_meta(obj, old)
    spec = spec_of(obj, errs)
    errs.extend(_stateful_set_spec(spec, schemas))
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
    errs, status = status_update(obj, old)
    errs.extend(
        nonnegative_fields(
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


def _daemon_set_spec(spec: Obj, schemas: Schemas) -> list[FieldError]:
    errs = validate_selector(spec.get("selector"), "spec.selector", "daemonset")
    template = spec.get("template")
    errs.extend(selector_matches_template(spec.get("selector"), template, "spec.template"))
    errs.extend(validate_pod_template(template, "spec.template", schemas))
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
    errs.extend(nonnegative_fields(spec, "spec", "minReadySeconds", "templateGeneration"))
    errs.extend(_daemon_set_strategy(spec.get("updateStrategy"), "spec.updateStrategy"))
    errs.extend(nonnegative_fields(spec, "spec", "revisionHistoryLimit"))
    return errs


validate_daemon_set, validate_daemon_set_update = selector_spec_validators(_daemon_set_spec)


def validate_daemon_set_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs, status = status_update(obj, old)
    errs.extend(
        nonnegative_fields(
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
    errs = create_meta(obj)
    if obj.get("data") is None:
        errs.append(required("data", "data is mandatory"))
    errs.extend(nonnegative(obj.get("revision"), "revision"))
    return errs


def validate_controller_revision_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = update_meta(obj, old)
    errs.extend(validate_controller_revision(obj))
    errs.extend(immutable("data", obj.get("data"), old.get("data")))
    return errs
