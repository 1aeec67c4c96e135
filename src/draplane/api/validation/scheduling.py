"""Defaulting and validation of scheduling.k8s.io/v1 PriorityClass
(pkg/apis/scheduling/validation, pkg/apis/scheduling/v1/defaults.go).

A name with the `system-` prefix is reserved for the two system classes, with their values;
any other class may not be above `HIGHEST_USER_DEFINABLE_PRIORITY`; `value` and
`preemptionPolicy` are immutable.
"""

from __future__ import annotations

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, not_supported
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import (
    immutable,
    validate_object_meta,
    validate_object_meta_update,
)

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
SYSTEM_PRIORITY_CLASSES: dict[str, tuple[int, str]] = {
    SYSTEM_CLUSTER_CRITICAL: (
        SYSTEM_CRITICAL_PRIORITY,
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
    SYSTEM_NODE_CRITICAL: (
        SYSTEM_CRITICAL_PRIORITY + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
}
"""The classes kube-apiserver creates at start: name -> (value, description)."""
PREEMPTION_POLICIES = ["Never", "PreemptLowerPriority"]


def default_priority_class(obj: Obj) -> None:
    if obj.get("preemptionPolicy") is None:
        obj["preemptionPolicy"] = "PreemptLowerPriority"


def _known_system_class(name: str, value: object, global_default: object) -> str:
    """IsKnownSystemPriorityClass: "" when it is one, else why not."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def validate_priority_class(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )
    name = str(obj["metadata"].get("name") or "")
    value = obj.get("value")
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        why = _known_system_class(name, value, obj.get("globalDefault"))
        if why:
            errs.append(
                forbidden(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                    f"reserved for system use only. error: {why}",
                )
            )
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            forbidden(
                "value",
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errs


def validate_priority_class_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    if obj.get("value") != old.get("value"):
        errs.append(forbidden("value", "may not be changed in an update."))
    errs.extend(
        immutable("preemptionPolicy", obj.get("preemptionPolicy"), old.get("preemptionPolicy"))
    )
    return errs
