"""policy/v1 PodDisruptionBudget rules (pkg/apis/policy/validation): minAvailable or
maxUnavailable (not both), each a non-negative integer or a percentage of at most 100%, a valid
label selector, a supported unhealthyPodEvictionPolicy. The spec may change (policy/v1);
`status` updates keep the counters non-negative."""

from __future__ import annotations

from draplane.api import names
from draplane.api.errors import FieldError, invalid, not_supported
from draplane.api.meta import Obj
from draplane.api.validation.apps import nonnegative_fields
from draplane.api.validation.objectmeta import (
    as_dict,
    shown,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.podtemplate import (
    not_more_than_100_percent,
    positive_int_or_percent,
)
from draplane.api.validation.rbac import _label_selector

EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
STATUS_COUNTERS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def _spec(obj: Obj, errs: list[FieldError]) -> None:
    spec = as_dict(obj.get("spec"), "spec", errs)
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(
            invalid("spec", shown(spec), "minAvailable and maxUnavailable cannot be both set")
        )
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        errs.extend(positive_int_or_percent(value, f"spec.{key}"))
        errs.extend(not_more_than_100_percent(value, f"spec.{key}"))
    if spec.get("selector") is not None:
        errs.extend(_label_selector(spec["selector"], "spec.selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES))


def validate_pod_disruption_budget(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    _spec(obj, errs)
    return errs


def validate_pod_disruption_budget_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    _spec(obj, errs)
    return errs


def validate_pod_disruption_budget_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    status = as_dict(obj.get("status"), "status", errs)
    errs.extend(nonnegative_fields(status, "status", *STATUS_COUNTERS))
    return errs
