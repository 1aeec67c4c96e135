"""Running a CRD version's validation rules on a custom resource (apiextensions-apiserver
schema/cel/validation.go): every rule at its schema node for every non-null value there,
inside arrays and maps too (`self` bound to the element); transition rules (`oldSelf`) only
on update and only where the old object has a value correlated with the new one (same
property, same map key, same key of an `x-kubernetes-list-type: map` list).

A rule that is not true is reported at the node's path (joined with its `fieldPath`) as its
`reason` says (FieldValueInvalid by default, with the node's schema type as the value): its
`message`, else the result of its `messageExpression`, else `failed rule: <rule>`. A runtime
error is reported as upstream words it (`no such key: x evaluating rule: <rule>`).
`rule_errors` compiles each schema once (by identity: once per served CRD generation).

Runtime cost (`cost`): each evaluation is charged its cost at the evaluated value's sizes,
before it runs, against the object's RuntimeCELCostBudget; an evaluation over PerCallLimit (or
one cel-expr-python stops at its 10,000 comprehension iterations) or over what is left of the
budget is not run, reported with upstream's message, and no further rule of the object runs.
"""

from __future__ import annotations

import re
from typing import Any

from cel_expr_python import cel

from draplane.api.errors import FieldError, duplicate, forbidden, invalid, required
from draplane.apiserver.crdcel.cost import (
    ITERATION_BUDGET,
    MESSAGE_OUT_OF_BUDGET,
    OUT_OF_BUDGET,
    Budget,
    Sizes,
    call_limit_message,
    message_call_limit_message,
)
from draplane.apiserver.crdcel.env import cel_value
from draplane.apiserver.crdcel.rules import Compiled, Node, compile_schema

_MAX_CACHED = 1024
_INDEX_ERROR = re.compile(r"^Index error: index=(-?\d+)")
_CEL_GO_WORDING = {"divide by zero": "division by zero"}
_cache: dict[int, tuple[Any, Node | None]] = {}


def compiled_schema(schema: Any) -> Node | None:
    """The rule tree of `schema`, compiled on first use and kept while the schema is served."""
    hit = _cache.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_cache) >= _MAX_CACHED:
        _cache.pop(next(iter(_cache)))
    node = compile_schema(schema)
    _cache[id(schema)] = (schema, node)
    return node


def rule_errors(schema: Any, obj: Any, old: Any = None) -> list[FieldError]:
    """The FieldErrors of the validation rules of `schema` on `obj` (`old`: the stored object
    of an update)."""
    node = compiled_schema(schema)
    if node is None or not isinstance(obj, dict):
        return []
    errs: list[FieldError] = []
    _walk(node, obj, old, "", errs, Budget(), root=True)
    return errs


def _sub(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(
    node: Node,
    value: Any,
    old: Any,
    path: str,
    errs: list[FieldError],
    budget: Budget,
    *,
    root: bool = False,
) -> None:
    if value is None:
        return
    if node.rules:
        _evaluate(node, value, old, path, errs, budget, root)
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        for key, child in node.properties.items():
            if key in value and budget.remaining >= 0:
                _walk(child, value[key], old_map.get(key), _sub(path, key), errs, budget)
        if node.additional is not None:
            for key, item in value.items():
                if budget.remaining < 0:
                    return
                _walk(node.additional, item, old_map.get(key), f"{path}[{key}]", errs, budget)
    elif isinstance(value, list) and node.items is not None:
        correlate = _correlator(node.schema, old)
        for i, item in enumerate(value):
            if budget.remaining < 0:
                return
            _walk(node.items, item, correlate(item), f"{path}[{i}]", errs, budget)


def _correlator(schema: dict[str, Any], old: Any) -> Any:
    """Old element of a new list element: by key in a list-type map, else none."""
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return lambda _item: None
    keys = [str(k) for k in schema.get("x-kubernetes-list-map-keys") or []]
    by_key = {tuple(_key(o.get(k)) for k in keys): o for o in old if isinstance(o, dict)}

    def find(item: Any) -> Any:
        if not isinstance(item, dict):
            return None
        return by_key.get(tuple(_key(item.get(k)) for k in keys))

    return find


def _key(v: Any) -> Any:
    """A hashable form of a list-map key value."""
    return repr(v) if isinstance(v, dict | list) else v


def _type_of(schema: dict[str, Any]) -> str:
    return str(schema.get("type") or "")


def _evaluate(
    node: Node,
    value: Any,
    old: Any,
    path: str,
    errs: list[FieldError],
    budget: Budget,
    root: bool,
) -> None:
    schema = node.schema
    shown = path or "<nil>"
    if budget.remaining <= 0:
        errs.append(invalid(shown, _type_of(schema), OUT_OF_BUDGET))
        budget.remaining = -1
        return
    data: dict[str, Any] = {"self": cel_value(schema, value, root=root)}
    if old is not None:
        data["oldSelf"] = cel_value(schema, old, root=root)
    sizes: Sizes | None = None
    for compiled in node.rules:
        if compiled.program is None:
            if compiled.error is not None:
                errs.append(
                    invalid(shown, _type_of(schema), f"rule compile error: {compiled.error}")
                )
            continue
        if compiled.uses_old_self and old is None:
            continue
        if sizes is None and node.sizes is not None:
            sizes = Sizes(node.sizes, schema, value, old)
        stop = budget.charge(
            compiled.plan.cost(sizes) if sizes is not None else compiled.plan.fixed
        )
        if stop is not None:
            detail = (
                OUT_OF_BUDGET if stop == "budget" else call_limit_message(_error_string(compiled))
            )
            errs.append(invalid(shown, _type_of(schema), detail))
            return
        try:
            result = compiled.program.eval(data=data)
        except Exception as e:  # a value the binding cannot convert (an int beyond int64)
            if ITERATION_BUDGET in str(e):
                errs.append(
                    invalid(shown, _type_of(schema), call_limit_message(_error_string(compiled)))
                )
                budget.remaining = -1
                return
            errs.append(invalid(shown, _type_of(schema), f"{e} evaluating rule: {compiled.text}"))
            continue
        if result.type() == cel.Type.ERROR:
            errs.append(invalid(shown, _type_of(schema), _runtime(compiled, result)))
            continue
        if result.value() is True:
            continue
        if result.type() != cel.Type.BOOL:
            errs.append(
                invalid(
                    shown,
                    _type_of(schema),
                    f"no such overload evaluating rule: {_rule_text(compiled)}",
                )
            )
            continue
        at = shown
        if compiled.field_path:
            at = compiled.field_path if not path else _join(path, compiled.field_path)
        message, stopped = _message(compiled, data, budget, sizes)
        if stopped:
            errs.append(invalid(at, _type_of(schema), message))
            return
        errs.append(_reason(compiled, at, _type_of(schema), message))


def _join(path: str, field_path: str) -> str:
    return path + field_path if field_path.startswith("[") else f"{path}.{field_path}"


def _rule_text(compiled: Compiled) -> str:
    return compiled.text.strip()


def _runtime(compiled: Compiled, result: Any) -> str:
    text = str(result.value()).strip()
    for prefix in ("INVALID_ARGUMENT: ", "NOT_FOUND: ", "UNKNOWN: ", "OUT_OF_RANGE: "):
        text = text.removeprefix(prefix)
    index = _INDEX_ERROR.match(text)
    if index:
        text = f"index out of bounds: {index.group(1)}"
    text = _CEL_GO_WORDING.get(text, text)
    if text.startswith("Key not found in map"):
        key = text.split(":", 1)[1].strip().strip('"')
        text = f"no such key: {key}"
    elif "No matching overloads" in text or text.startswith("no such overload"):
        return (
            "'no such overload': call arguments did not match a supported operator, function "
            f"or macro signature for rule: {_rule_text(compiled)}"
        )
    return f"{text} evaluating rule: {_rule_text(compiled)}"


def _error_string(compiled: Compiled) -> str:
    """ruleErrorString: the rule's message, else the rule."""
    return str(compiled.rule.get("message") or "").strip() or _rule_text(compiled)


def _message(
    compiled: Compiled, data: dict[str, Any], budget: Budget, sizes: Sizes | None
) -> tuple[str, bool]:
    """The detail of a failed rule, or (True) why its messageExpression stopped validation."""
    if compiled.message_program is not None:
        plan = compiled.message_plan
        stop = budget.charge(plan.cost(sizes) if sizes is not None else plan.fixed)
        expression = str(compiled.rule.get("messageExpression") or "")
        if stop is not None:
            if stop == "budget":
                return MESSAGE_OUT_OF_BUDGET, True
            return message_call_limit_message(expression), True
        try:
            result = compiled.message_program.eval(data=data)
            text = result.value() if result.type() == cel.Type.STRING else None
        except Exception as e:  # upstream logs it and falls back to the message
            if ITERATION_BUDGET in str(e):
                budget.remaining = -1
                return message_call_limit_message(expression), True
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text and "\r" not in text:
            return text, False
    message = str(compiled.rule.get("message") or "")
    return message or f"failed rule: {_rule_text(compiled)}", False


def _reason(compiled: Compiled, path: str, type_: str, detail: str) -> FieldError:
    reason = compiled.rule.get("reason")
    if reason == "FieldValueForbidden":
        return forbidden(path, detail)
    if reason == "FieldValueRequired":
        return required(path, detail)
    if reason == "FieldValueDuplicate":
        return duplicate(path, type_)
    return invalid(path, type_, detail)
