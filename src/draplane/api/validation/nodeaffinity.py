"""NodeSelector, node affinity and toleration rules (core ValidateNodeSelector and friends)."""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.validation.objectmeta import add_invalid, as_dict, as_list, type_invalid

_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def validate_node_selector(sel: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    terms = as_list(
        as_dict(sel, path, errs).get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms", errs
    )
    if not terms and not errs:
        return [required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    for i, term in enumerate(terms):
        errs.extend(validate_node_selector_term(term, f"{path}.nodeSelectorTerms[{i}]"))
    return errs


def validate_node_selector_term(term: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    term = as_dict(term, path, errs)
    exprs = as_list(term.get("matchExpressions"), f"{path}.matchExpressions", errs)
    for j, req in enumerate(exprs):
        errs.extend(_label_requirement(req, f"{path}.matchExpressions[{j}]"))
    fields = as_list(term.get("matchFields"), f"{path}.matchFields", errs)
    for j, req in enumerate(fields):
        errs.extend(_field_requirement(req, f"{path}.matchFields[{j}]"))
    return errs


def _label_requirement(req: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    req = as_dict(req, path, errs)
    op = req.get("operator")
    values = as_list(req.get("values"), f"{path}.values", errs)
    if op in ("In", "NotIn"):
        if not values:
            errs.append(
                required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                required(
                    f"{path}.values",
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
    key = req.get("key")
    add_invalid(errs, f"{path}.key", key, names.is_qualified_name(key))
    return errs


def _field_requirement(req: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    req = as_dict(req, path, errs)
    op = req.get("operator")
    values = as_list(req.get("values"), f"{path}.values", errs)
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector",
                )
            )
    else:
        errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
    key = req.get("key")
    if key != "metadata.name":
        errs.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, v in enumerate(values):
            add_invalid(errs, f"{path}.values[{i}]", v, names.is_dns1123_subdomain(v))
    return errs


def validate_node_affinity(affinity: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    node_affinity = as_dict(
        as_dict(affinity, path, errs).get("nodeAffinity"), f"{path}.nodeAffinity", errs
    )
    path = f"{path}.nodeAffinity"
    required_sel = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required_sel is not None:
        errs.extend(
            validate_node_selector(
                required_sel, f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
            )
        )
    preferred_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(
        as_list(
            node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"),
            preferred_path,
            errs,
        )
    ):
        p = f"{preferred_path}[{i}]"
        term = as_dict(term, p, errs)
        weight = term.get("weight")
        if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 100:
            errs.append(invalid(f"{p}.weight", weight, "must be in the range 1-100"))
        errs.extend(validate_node_selector_term(term.get("preference"), f"{p}.preference"))
    return errs


def validate_tolerations(tolerations: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, tol in enumerate(as_list(tolerations, path, errs)):
        errs.extend(_toleration(tol, f"{path}[{i}]"))
    return errs


def _toleration(tol: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    tol = as_dict(tol, path, errs)
    key, op = tol.get("key") or "", tol.get("operator") or ""
    value, effect = tol.get("value") or "", tol.get("effect") or ""
    if key:
        add_invalid(errs, f"{path}.key", key, names.is_qualified_name(key))
    if not key and op != "Exists":
        errs.append(
            invalid(
                f"{path}.operator",
                op,
                'operator must be Exists when `key` is empty, which means "match all values and '
                'all keys"',
            )
        )
    if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
        errs.append(
            invalid(
                f"{path}.effect",
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        )
    if op in ("Equal", ""):
        msgs = names.is_valid_label_value(value)
        if msgs:
            errs.append(invalid(f"{path}.operator", value, ";".join(msgs)))
    elif op == "Exists":
        if value:
            errs.append(
                invalid(
                    f"{path}.operator", value, "value must be empty when `operator` is 'Exists'"
                )
            )
    else:
        errs.append(not_supported(f"{path}.operator", op, ["Equal", "Exists"]))
    if effect:
        errs.extend(validate_taint_effect(effect, f"{path}.effect"))
    return errs


def validate_taint_effect(effect: Any, path: str) -> list[FieldError]:
    if not isinstance(effect, str):
        return [type_invalid(path, effect, "must be a string")]
    if effect not in _TAINT_EFFECTS:
        return [not_supported(path, effect, _TAINT_EFFECTS)]
    return []
