"""apps/v1 rules for Deployments and ReplicaSets (pkg/apis/apps/validation/validation.go):
create, update (immutable selectors) and `status` updates, and the helpers the other apps/v1
kinds (`statefulset`) share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation.objectmeta import (
    as_dict,
    immutable,
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
    template_for_replicas,
    validate_selector,
)


def create_meta(obj: Obj) -> list[FieldError]:
    return validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )


def spec_of(obj: Obj, errs: list[FieldError]) -> Obj:
    return as_dict(obj.get("spec"), "spec", errs)


def nonnegative_fields(spec: Obj, path: str, *fields: str) -> list[FieldError]:
    return [e for f in fields for e in nonnegative(spec.get(f), f"{path}.{f}")]


def update_meta(obj: Obj, old: Obj) -> list[FieldError]:
    return validate_object_meta_update(obj["metadata"], old.get("metadata") or {})


Validator = Callable[[Obj, Schemas], list[FieldError]]
UpdateValidator = Callable[[Obj, Obj, Schemas], list[FieldError]]


def selector_spec_validators(
    spec_fn: Callable[[Obj, Schemas], list[FieldError]],
) -> tuple[Validator, UpdateValidator]:
    """Create and update validation of a kind whose spec has an immutable `selector` and a pod
    template (Deployment, ReplicaSet, DaemonSet): object meta, then `spec_fn` on the spec."""

    def validate(obj: Obj, schemas: Schemas) -> list[FieldError]:
        errs = create_meta(obj)
        errs.extend(spec_fn(spec_of(obj, errs), schemas))
        return errs

    def validate_update(obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
        errs = update_meta(obj, old)
        errs.extend(spec_fn(spec_of(obj, errs), schemas))
        errs.extend(selector_immutable(obj, old))
        return errs

    return validate, validate_update


def selector_immutable(obj: Obj, old: Obj) -> list[FieldError]:
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


def _deployment_spec(spec: Obj, schemas: Schemas) -> list[FieldError]:
    errs = nonnegative_fields(spec, "spec", "replicas")
    errs.extend(validate_selector(spec.get("selector"), "spec.selector", "deployment"))
    errs.extend(
        template_for_replicas(spec.get("selector"), spec.get("template"), "spec.template", schemas)
    )
    errs.extend(_deployment_strategy(spec.get("strategy"), "spec.strategy"))
    errs.extend(nonnegative_fields(spec, "spec", "minReadySeconds", "revisionHistoryLimit"))
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


validate_deployment, validate_deployment_update = selector_spec_validators(_deployment_spec)


def _replica_counts(
    status: Obj, counted: tuple[str, ...], nonneg: tuple[str, ...]
) -> list[FieldError]:
    """Non-negative counters; each of `counted` at most status.replicas, available at most
    ready."""
    errs = nonnegative_fields(status, "status", *nonneg)
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


def status_update(obj: Obj, old: Obj) -> tuple[list[FieldError], Obj]:
    errs = update_meta(obj, old)
    errs.extend(validate_meta_content(obj["metadata"]))
    return errs, as_dict(obj.get("status"), "status", errs)


def validate_deployment_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs, status = status_update(obj, old)
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


def _replica_set_spec(spec: Obj, schemas: Schemas) -> list[FieldError]:
    errs = nonnegative_fields(spec, "spec", "replicas", "minReadySeconds")
    # Upstream's message names deployments for ReplicaSets too.
    errs.extend(validate_selector(spec.get("selector"), "spec.selector", "deployment"))
    errs.extend(
        template_for_replicas(spec.get("selector"), spec.get("template"), "spec.template", schemas)
    )
    return errs


validate_replica_set, validate_replica_set_update = selector_spec_validators(_replica_set_spec)


def validate_replica_set_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs, status = status_update(obj, old)
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
