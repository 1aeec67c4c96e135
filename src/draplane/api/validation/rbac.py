"""rbac.authorization.k8s.io/v1 defaulting and validation: Role, ClusterRole, RoleBinding and
ClusterRoleBinding (pkg/apis/rbac/v1/defaults.go, pkg/apis/rbac/validation/validation.go).

Names only have to be path segments (not `.` or `..`, no `/` or `%`). Rules need verbs; resource
rules need apiGroups and resources; nonResourceURLs stand alone and only in ClusterRoles. A
binding's roleRef defaults its apiGroup and may not change; subjects are Users, Groups or
ServiceAccounts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.selectors import LabelSelector
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    as_str,
    shown,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ["ServiceAccount", "User", "Group"]


@dataclass(frozen=True)
class GoValue:
    """A value printed in a FieldError as Go's validation prints it (`[]string{"a"}`)."""

    text: str

    def __str__(self) -> str:
        return self.text


def _string_slice(values: list[Any]) -> GoValue:
    return GoValue("[]string{" + ", ".join(f'"{v}"' for v in values) + "}")


def rbac_name(value: Any, *, prefix: bool = False) -> list[str]:
    """ValidateRBACName (path.IsValidPathSegmentName), for names and generateName alike."""
    if not isinstance(value, str):
        return ["must be a string"]
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


# --- defaulting -------------------------------------------------------------------------------


def default_binding(obj: Obj) -> None:
    """SetDefaults_RoleBinding / ClusterRoleBinding / Subject."""
    ref = obj.get("roleRef")
    if ref is None:
        ref = obj["roleRef"] = {}
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    subjects = obj.get("subjects")
    if not isinstance(subjects, list):
        return
    for subject in subjects:
        # A ServiceAccount's apiGroup defaults to "", which the wire form leaves out.
        if (
            isinstance(subject, dict)
            and not subject.get("apiGroup")
            and subject.get("kind") in ("User", "Group")
        ):
            subject["apiGroup"] = GROUP


# --- roles ------------------------------------------------------------------------------------


def validate_policy_rule(rule: Any, *, namespaced: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    rule = as_dict(rule, path, errs)
    verbs = as_list(rule.get("verbs"), f"{path}.verbs", errs)
    groups = as_list(rule.get("apiGroups"), f"{path}.apiGroups", errs)
    resources = as_list(rule.get("resources"), f"{path}.resources", errs)
    resource_names = as_list(rule.get("resourceNames"), f"{path}.resourceNames", errs)
    urls = as_list(rule.get("nonResourceURLs"), f"{path}.nonResourceURLs", errs)
    for key, values in (
        ("verbs", verbs),
        ("apiGroups", groups),
        ("resources", resources),
        ("resourceNames", resource_names),
        ("nonResourceURLs", urls),
    ):
        for i, value in enumerate(values):
            as_str(value, f"{path}.{key}[{i}]", errs)
    if not verbs:
        errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    if urls:
        if namespaced:
            errs.append(
                invalid(
                    f"{path}.nonResourceURLs",
                    _string_slice(urls),
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if groups or resources or resource_names:
            errs.append(
                invalid(
                    f"{path}.nonResourceURLs",
                    _string_slice(urls),
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errs
    if not groups:
        errs.append(
            required(f"{path}.apiGroups", "resource rules must supply at least one api group")
        )
    if not resources:
        errs.append(
            required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return errs


def _rules(obj: Obj, *, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(as_list(obj.get("rules"), "rules", errs)):
        errs.extend(validate_policy_rule(rule, namespaced=namespaced, path=f"rules[{i}]"))
    return errs


def validate_role(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(obj["metadata"], namespaced=True, name_fn=rbac_name)
    errs.extend(_rules(obj, namespaced=True))
    return errs


def validate_role_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_role(obj)
    errs.extend(validate_object_meta_update(obj["metadata"], old.get("metadata") or {}))
    return errs


def _label_selector(selector: Any, path: str) -> list[FieldError]:
    """metav1 ValidateLabelSelector, then LabelSelectorAsSelector."""
    errs: list[FieldError] = []
    selector = as_dict(selector, path, errs)
    errs.extend(validate_labels(selector.get("matchLabels"), f"{path}.matchLabels"))
    expressions = as_list(selector.get("matchExpressions"), f"{path}.matchExpressions", errs)
    for i, expr in enumerate(expressions):
        p = f"{path}.matchExpressions[{i}]"
        expr = as_dict(expr, p, errs)
        op = expr.get("operator")
        values = as_list(expr.get("values"), f"{p}.values", errs)
        if op in ("In", "NotIn"):
            if not values:
                errs.append(
                    required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    forbidden(
                        f"{p}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(invalid(f"{p}.operator", op, "not a valid selector operator"))
        key = expr.get("key")
        add_invalid(errs, f"{p}.key", key, names.is_qualified_name(key))
        for j, value in enumerate(values):
            add_invalid(errs, f"{p}.values[{j}]", value, names.is_valid_label_value(value))
    if not errs:
        try:
            LabelSelector.from_label_selector(selector)
        except Exception:
            errs.append(invalid(path, shown(selector), "invalid label selector."))
    return errs


def validate_cluster_role(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(obj["metadata"], namespaced=False, name_fn=rbac_name)
    errs.extend(_rules(obj, namespaced=False))
    aggregation = obj.get("aggregationRule")
    if aggregation is not None:
        aggregation = as_dict(aggregation, "aggregationRule", errs)
        path = "aggregationRule.clusterRoleSelectors"
        selectors = as_list(aggregation.get("clusterRoleSelectors"), path, errs)
        if not selectors:
            errs.append(
                required(
                    path, "at least one clusterRoleSelector required if aggregationRule is non-nil"
                )
            )
        for i, selector in enumerate(selectors):
            errs.extend(_label_selector(selector, f"{path}[{i}]"))
    return errs


def validate_cluster_role_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_cluster_role(obj)
    errs.extend(validate_object_meta_update(obj["metadata"], old.get("metadata") or {}))
    return errs


# --- bindings ---------------------------------------------------------------------------------


def _role_ref(obj: Obj, errs: list[FieldError]) -> Obj:
    ref = as_dict(obj.get("roleRef"), "roleRef", errs)
    return {
        "apiGroup": as_str(ref.get("apiGroup"), "roleRef.apiGroup", errs),
        "kind": as_str(ref.get("kind"), "roleRef.kind", errs),
        "name": as_str(ref.get("name"), "roleRef.name", errs),
    }


def validate_subject(subject: Any, *, namespaced: bool, path: str) -> list[FieldError]:
    """ValidateRoleBindingSubject."""
    errs: list[FieldError] = []
    subject = as_dict(subject, path, errs)
    name = as_str(subject.get("name"), f"{path}.name", errs)
    kind = subject.get("kind")
    api_group = subject.get("apiGroup") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            add_invalid(errs, f"{path}.name", name, names.is_dns1123_subdomain(name))
        if api_group:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if api_group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind or "", SUBJECT_KINDS))
    return errs


def _validate_binding(obj: Obj, *, namespaced: bool) -> list[FieldError]:
    errs = validate_object_meta(obj["metadata"], namespaced=namespaced, name_fn=rbac_name)
    ref = _role_ref(obj, errs)
    if ref["apiGroup"] != GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref["apiGroup"], [GROUP]))
    role_kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref["kind"] not in role_kinds:
        errs.append(not_supported("roleRef.kind", ref["kind"], role_kinds))
    if not ref["name"]:
        errs.append(required("roleRef.name"))
    else:
        add_invalid(errs, "roleRef.name", ref["name"], rbac_name(ref["name"]))
    for i, subject in enumerate(as_list(obj.get("subjects"), "subjects", errs)):
        errs.extend(validate_subject(subject, namespaced=namespaced, path=f"subjects[{i}]"))
    return errs


def _validate_binding_update(obj: Obj, old: Obj, *, namespaced: bool) -> list[FieldError]:
    errs = _validate_binding(obj, namespaced=namespaced)
    errs.extend(validate_object_meta_update(obj["metadata"], old.get("metadata") or {}))
    new_ref, old_ref = _role_ref(obj, []), _role_ref(old, [])
    if new_ref != old_ref:
        shown_ref = GoValue(
            f'rbac.RoleRef{{APIGroup:"{new_ref["apiGroup"]}", Kind:"{new_ref["kind"]}", '
            f'Name:"{new_ref["name"]}"}}'
        )
        errs.append(invalid("roleRef", shown_ref, "cannot change roleRef"))
    return errs


def validate_role_binding(obj: Obj) -> list[FieldError]:
    return _validate_binding(obj, namespaced=True)


def validate_role_binding_update(obj: Obj, old: Obj) -> list[FieldError]:
    return _validate_binding_update(obj, old, namespaced=True)


def validate_cluster_role_binding(obj: Obj) -> list[FieldError]:
    return _validate_binding(obj, namespaced=False)


def validate_cluster_role_binding_update(obj: Obj, old: Obj) -> list[FieldError]:
    return _validate_binding_update(obj, old, namespaced=False)
