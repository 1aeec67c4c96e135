"""The checks of `x-kubernetes-validations` when a CustomResourceDefinition is written
(apiextensions-apiserver pkg/apis/apiextensions/validation): the rule is set, `message` is
non-empty and on one line (required when the rule spans lines), `reason` is one of the four
FieldValue reasons, `fieldPath` names a field of the node, the rule compiles to a bool and the
`messageExpression` to a string, `oldSelf` only where old and new values correlate, and the
estimated cost (times the node's cardinality) is within StaticEstimatedCostLimit, and all of a
schema's rules together within StaticEstimatedCRDCostLimit.

Paths are upstream's: a schema shared by every version is reported as
`spec.validation.openAPIV3Schema` (the internal version hoists it there), else as
`spec.versions[i].schema.openAPIV3Schema`. Rules and messageExpressions the stored CRD
already has are not compiled again on update (upstream's stored-expressions environment).
"""

from __future__ import annotations

from typing import Any

from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.apiserver.crdcel.rules import (
    REASONS,
    STATIC_COST_LIMIT,
    STATIC_CRD_COST_LIMIT,
    compile_rule,
    max_elements,
    normalized_field_path,
)


class GoRule:
    """A ValidationRule as Go's %#v prints it (the value of an Invalid rule)."""

    def __init__(self, rule: dict[str, Any]) -> None:
        def q(key: str) -> str:
            return '"' + str(rule.get(key) or "").replace('"', '\\"') + '"'

        reason = "(*apiextensions.FieldValueErrorReason)(nil)"
        if rule.get("reason"):
            reason = f'"{rule["reason"]}"'
        optional = "(*bool)(nil)"
        if rule.get("optionalOldSelf") is not None:
            optional = "true" if rule["optionalOldSelf"] else "false"
        self.text = (
            f"apiextensions.ValidationRule{{Rule:{q('rule')}, Message:{q('message')}, "
            f"MessageExpression:{q('messageExpression')}, Reason:{reason}, "
            f"FieldPath:{q('fieldPath')}, OptionalOldSelf:{optional}}}"
        )

    def __str__(self) -> str:
        return self.text


def _schemas(crd: Obj) -> list[tuple[str, Any]]:
    versions = [v for v in (crd.get("spec") or {}).get("versions") or [] if isinstance(v, dict)]
    schemas = [
        v["schema"].get("openAPIV3Schema") if isinstance(v.get("schema"), dict) else None
        for v in versions
    ]
    if schemas and all(s == schemas[0] for s in schemas):
        return [("spec.validation.openAPIV3Schema", schemas[0])]
    return [(f"spec.versions[{i}].schema.openAPIV3Schema", s) for i, s in enumerate(schemas)]


def _expressions(schema: Any, out: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for rule in schema.get("x-kubernetes-validations") or []:
            if isinstance(rule, dict):
                out.add(str(rule.get("rule") or ""))
                out.add(str(rule.get("messageExpression") or ""))
        for sub in (schema.get("properties") or {}).values():
            _expressions(sub, out)
        for key in ("items", "additionalProperties"):
            _expressions(schema.get(key), out)
    return out


class _Stored(set[str]):
    """The stored CRD's expressions, and the estimated costs of one schema's rules."""

    costs: list[tuple[int, str]]


def crd_rule_errors(crd: Obj, old: Obj | None = None) -> list[FieldError]:
    """The FieldErrors of the validation rules of every version's schema of `crd`."""
    stored = _Stored()
    if old is not None:
        for _, schema in _schemas(old):
            _expressions(schema, stored)
    stored.discard("")
    errs: list[FieldError] = []
    for path, schema in _schemas(crd):
        if isinstance(schema, dict):
            stored.costs = []
            _node(schema, path, errs, stored, root=True, cardinality=1, uncorrelatable=None)
            _total_cost(path, stored.costs, errs)
    return errs


def _total_cost(path: str, costs: list[tuple[int, str]], errs: list[FieldError]) -> None:
    """StaticEstimatedCRDCostLimit: the rules of one schema together, the four most
    expensive named."""
    total = sum(c for c, _ in costs)
    if total <= STATIC_CRD_COST_LIMIT:
        return
    for _, at in sorted(costs, key=lambda c: -c[0])[:4]:
        errs.append(
            forbidden(
                at,
                "contributed to estimated rule & messageExpression cost total exceeding cost "
                "limit for entire OpenAPIv3 schema",
            )
        )
    name = "x-kubernetes-validations estimated rule & messageExpression cost total for entire "
    errs.append(
        forbidden(path, _cost_message(name + "OpenAPIv3 schema", total, STATIC_CRD_COST_LIMIT))
    )


def _cost_message(name: str, cost: int, limit: int = STATIC_COST_LIMIT) -> str:
    factor = cost / limit
    shown = (
        "more than 100x" if factor > 100 else (f"{factor:f}x" if factor < 1.5 else f"{factor:.1f}x")
    )
    return (
        f"{name} exceeds budget by factor of {shown} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def _node(
    schema: dict[str, Any],
    path: str,
    errs: list[FieldError],
    stored: _Stored,
    *,
    root: bool,
    cardinality: int,
    uncorrelatable: str | None,
) -> None:
    for i, rule in enumerate(schema.get("x-kubernetes-validations") or []):
        if isinstance(rule, dict):
            at = f"{path}.x-kubernetes-validations[{i}]"
            _rule(schema, rule, at, errs, stored, root, cardinality, uncorrelatable)
    for key, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict) and not (root and key == "metadata"):
            _node(
                sub,
                f"{path}.properties[{key}]",
                errs,
                stored,
                root=False,
                cardinality=cardinality,
                uncorrelatable=uncorrelatable,
            )
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        _node(
            additional,
            f"{path}.additionalProperties",
            errs,
            stored,
            root=False,
            cardinality=cardinality * max_elements(schema),
            uncorrelatable=uncorrelatable,
        )
    items = schema.get("items")
    if isinstance(items, dict):
        correlatable = schema.get("x-kubernetes-list-type") == "map"
        _node(
            items,
            f"{path}.items",
            errs,
            stored,
            root=False,
            cardinality=cardinality * max_elements(schema),
            uncorrelatable=uncorrelatable or (None if correlatable else f"{path}.items"),
        )


def _has_newline(text: str) -> bool:
    return "\n" in text or "\r" in text


def _rule(
    schema: dict[str, Any],
    rule: dict[str, Any],
    at: str,
    errs: list[FieldError],
    stored: _Stored,
    root: bool,
    cardinality: int,
    uncorrelatable: str | None,
) -> None:
    text = str(rule.get("rule") or "")
    message = str(rule.get("message") or "")
    message_expr = str(rule.get("messageExpression") or "")
    field_path = str(rule.get("fieldPath") or "")
    before = len(errs)
    if not text.strip():
        errs.append(required(f"{at}.rule", "rule is not specified"))
    elif message and not message.strip():
        errs.append(invalid(f"{at}.message", message, "message must be non-empty if specified"))
    elif _has_newline(message.strip()):
        errs.append(invalid(f"{at}.message", message, "message must not contain line breaks"))
    elif _has_newline(text.strip()) and not message.strip():
        errs.append(
            required(f"{at}.message", "message must be specified if rule contains line breaks")
        )
    if message_expr and not message_expr.strip():
        errs.append(
            required(f"{at}.messageExpression", "messageExpression must be non-empty if specified")
        )
    reason = rule.get("reason")
    if reason is not None and reason not in REASONS:
        errs.append(not_supported(f"{at}.reason", reason, list(REASONS)))
    if field_path and not field_path.strip():
        errs.append(
            invalid(f"{at}.fieldPath", field_path, "fieldPath must be non-empty if specified")
        )
    if _has_newline(field_path):
        errs.append(
            invalid(f"{at}.fieldPath", field_path, "fieldPath must not contain line breaks")
        )
    if field_path and normalized_field_path(schema, rule) is None:
        errs.append(invalid(f"{at}.fieldPath", field_path, "fieldPath must be a valid path"))
    if len(errs) > before or not text.strip():
        return
    compiled = compile_rule(schema, rule, root=root)
    rule_stored = text in stored
    cost = compiled.cost * cardinality
    stored.costs.append((cost, f"{at}.rule"))
    if not rule_stored and compiled.error is None and cost > STATIC_COST_LIMIT:
        errs.append(forbidden(f"{at}.rule", _cost_message("estimated rule cost", cost)))
    if compiled.error is not None and not rule_stored:
        errs.append(invalid(f"{at}.rule", GoRule(rule), compiled.error))
    if compiled.message_error is not None:
        if message_expr not in stored:
            errs.append(invalid(f"{at}.messageExpression", GoRule(rule), compiled.message_error))
    elif compiled.message_program is not None:
        mcost = compiled.message_cost * cardinality
        stored.costs.append((mcost, f"{at}.messageExpression"))
        if mcost > STATIC_COST_LIMIT and message_expr not in stored:
            errs.append(
                forbidden(
                    f"{at}.messageExpression",
                    _cost_message("estimated messageExpression cost", mcost),
                )
            )
    if compiled.uses_old_self and uncorrelatable is not None:
        errs.append(
            invalid(
                f"{at}.rule",
                text,
                "oldSelf cannot be used on the uncorrelatable portion of the schema within "
                + uncorrelatable,
            )
        )
