"""Rules shared by resource.k8s.io/v1's kinds (kubernetes/kubernetes
pkg/apis/resource/validation, 1.36): names, selectors, opaque configuration, tolerations and
list limits, read defensively (a wrong JSON type is a 422, never an exception).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from draplane.api import names
from draplane.api.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import add_invalid, as_dict, as_list, as_str, too_long
from draplane.api.validation.resource import validate_driver_name

__all__ = [
    "Item",
    "add_invalid",
    "as_dict",
    "as_list",
    "as_str",
    "items",
    "too_long",
    "validate_driver_name",
]

CEL_MAX = 10 * 1024
OPAQUE_MAX = 10 * 1024
SELECTORS_MAX = 32
TOLERATIONS_MAX = 16
POOL_NAME_MAX = 253
ID_MAX = 32
DOMAIN_MAX = 63
TOLERATION_OPERATORS = ["Equal", "Exists"]
TAINT_EFFECTS = ["NoSchedule", "NoExecute", "None"]
TOLERATION_EFFECTS = ["NoSchedule", "NoExecute", "None"]
_C_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Item = tuple[int, Any, str]
"""An element of a list: its index, value and field path."""

CEL_MAX_COST = 1_000_000
"""resource.k8s.io/v1 CELSelectorExpressionMaxCost: the estimated cost a selector may have."""

SelectorCompiler = Callable[[str], tuple[str | None, int]]
"""Compiles a device selector: (its compile error or None, its estimated worst-case cost)."""

_selector_compiler: SelectorCompiler | None = None


def use_selector_compiler(compiler: SelectorCompiler | None) -> None:
    """Installs the device-selector CEL compiler validation uses (the API server installs the
    allocator's cached compiler, draplane.dra.cel, which this layer may not import); without
    one, selectors are checked for presence and length only."""
    global _selector_compiler
    _selector_compiler = compiler


def items(
    value: Any, path: str, errs: list[FieldError], limit: int, *, required_list: bool = False
) -> list[Item]:
    """The elements of the list at `path` (a type error or Required when missing and
    `required_list`); `Too many` past `limit` (the elements are still checked; a negative
    `limit` is none)."""
    listed = as_list(value, path, errs)
    if required_list and not listed and value is None:
        errs.append(required(path))
    if 0 <= limit < len(listed):
        errs.append(too_many(path, len(listed), limit))
    return [(i, v, f"{path}[{i}]") for i, v in enumerate(listed)]


def unique_names(
    entries: list[Item],
    errs: list[FieldError],
    check: Callable[[Any], list[str]] = names.is_dns1123_label,
    key: str = "name",
) -> list[str]:
    """Each entry's `key`: required, valid (`check`), unique (Duplicate on the later one)."""
    seen: list[str] = []
    for _, entry, path in entries:
        entry = entry if isinstance(entry, dict) else {}
        name = as_str(entry.get(key), f"{path}.{key}", errs)
        if not name:
            errs.append(required(f"{path}.{key}"))
            continue
        add_invalid(errs, f"{path}.{key}", name, check(name))
        if name in seen:
            errs.append(duplicate(f"{path}.{key}", name))
        seen.append(name)
    return seen


def device_class_name(value: Any, path: str, errs: list[FieldError]) -> None:
    name = as_str(value, path, errs)
    if not name:
        errs.append(required(path))
    else:
        add_invalid(errs, path, name, names.is_dns1123_subdomain(name))


def pool_name(value: Any, path: str, errs: list[FieldError]) -> None:
    """DNS subdomains joined by `/`, at most 253 characters."""
    name = as_str(value, path, errs)
    if not name:
        errs.append(required(path))
        return
    if len(name) > POOL_NAME_MAX:
        errs.append(too_long(path, name, POOL_NAME_MAX))
    for part in name.split("/"):
        add_invalid(errs, path, name, names.is_dns1123_subdomain(part))


def qualified_name(value: Any, path: str, errs: list[FieldError], *, domain: bool) -> None:
    """An attribute or capacity name: `id` or `domain/id` (C identifier of at most 32,
    DNS subdomain of at most 63); `domain` requires the domain ("must include a domain")."""
    name = as_str(value, path, errs)
    if not name:
        errs.append(required(path))
        return
    prefix, slash, ident = name.rpartition("/")
    if domain and not slash:
        errs.append(required(path, "must include a domain"))
    if slash:
        if not prefix:
            errs.append(invalid(path, name, "the domain must not be empty"))
        elif len(prefix) > DOMAIN_MAX:
            errs.append(too_long(path, prefix, DOMAIN_MAX))
        else:
            add_invalid(errs, path, prefix, names.is_dns1123_subdomain(prefix))
    if not _C_ID.match(ident):
        errs.append(
            invalid(
                path,
                ident,
                "a valid C identifier must start with alphabetic character or '_', followed "
                "by a string of alphanumeric characters or '_' "
                "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
                "'[A-Za-z_][A-Za-z0-9_]*')",
            )
        )
    elif len(ident) > ID_MAX:
        errs.append(too_long(path, ident, ID_MAX))


def selectors(value: Any, path: str, errs: list[FieldError], *, stored: bool = False) -> None:
    """DeviceSelectors: exactly one member, `cel{expression}`: required, at most 10 KiB, and
    compiling to a bool within the cost limit (validateCELSelector). `stored` expressions (an
    update that leaves them unchanged) were accepted when written and are not compiled again:
    upstream compiles them in the permissive "stored expressions" environment."""
    for _, selector, at in items(value, path, errs, SELECTORS_MAX):
        selector = as_dict(selector, at, errs)
        if "cel" not in selector or selector.get("cel") is None:
            errs.append(required(f"{at}.cel"))
            continue
        cel = as_dict(selector["cel"], f"{at}.cel", errs)
        expr_path = f"{at}.cel.expression"
        expression = as_str(cel.get("expression"), expr_path, errs)
        if not expression.strip():
            errs.append(required(expr_path))
        elif len(expression) > CEL_MAX:
            # Too long expressions are not compiled.
            errs.append(too_long(expr_path, "<value omitted>", CEL_MAX))
        elif not stored and _selector_compiler is not None:
            error, cost = _selector_compiler(expression)
            if error is not None:
                errs.append(invalid(expr_path, expression, error))
            elif cost > CEL_MAX_COST:
                errs.append(forbidden(expr_path, "too complex, exceeds cost limit"))


def opaque(value: Any, path: str, errs: list[FieldError]) -> None:
    """OpaqueDeviceConfiguration: `driver` and `parameters` (a JSON object of at most 10 KiB)."""
    config = as_dict(value, path, errs)
    errs.extend(validate_driver_name(config.get("driver", ""), f"{path}.driver"))
    parameters = config.get("parameters")
    if parameters is None:
        errs.append(required(f"{path}.parameters"))
    elif not isinstance(parameters, dict):
        errs.append(invalid(f"{path}.parameters", "<value omitted>", "must be a valid JSON object"))
    elif len(orjson.dumps(parameters)) > OPAQUE_MAX:
        errs.append(too_long(f"{path}.parameters", "<value omitted>", OPAQUE_MAX))


def device_config(value: Any, path: str, errs: list[FieldError]) -> None:
    """A DeviceConfiguration: exactly one member, `opaque`."""
    config = as_dict(value, path, errs)
    if config.get("opaque") is None:
        errs.append(required(f"{path}.opaque"))
    else:
        opaque(config["opaque"], f"{path}.opaque", errs)


def tolerations(value: Any, path: str, errs: list[FieldError]) -> None:
    for _, toleration, at in items(value, path, errs, TOLERATIONS_MAX):
        toleration = as_dict(toleration, at, errs)
        key = as_str(toleration.get("key"), f"{at}.key", errs)
        if key:
            add_invalid(errs, f"{at}.key", key, names.is_qualified_name(key))
        operator = as_str(toleration.get("operator"), f"{at}.operator", errs) or "Equal"
        value_ = as_str(toleration.get("value"), f"{at}.value", errs)
        if operator not in TOLERATION_OPERATORS:
            errs.append(not_supported(f"{at}.operator", operator, TOLERATION_OPERATORS))
        elif operator == "Exists" and value_:
            errs.append(invalid(f"{at}.value", value_, "must be empty when `operator` is 'Exists'"))
        elif operator == "Equal":
            add_invalid(errs, f"{at}.value", value_, names.is_valid_label_value(value_))
        if not key and operator != "Exists":
            errs.append(invalid(f"{at}.operator", operator, "must be 'Exists' when key is empty"))
        effect = as_str(toleration.get("effect"), f"{at}.effect", errs)
        if effect and effect not in TOLERATION_EFFECTS:
            errs.append(not_supported(f"{at}.effect", effect, TOLERATION_EFFECTS))
        seconds = toleration.get("tolerationSeconds")
        if seconds is not None and (not isinstance(seconds, int) or isinstance(seconds, bool)):
            errs.append(invalid(f"{at}.tolerationSeconds", seconds, "must be an integer"))


def taints(value: Any, path: str, errs: list[FieldError], limit: int) -> None:
    for _, entry, at in items(value, path, errs, limit):
        taint(entry, at, errs)


def taint(value: Any, at: str, errs: list[FieldError]) -> None:
    """A DeviceTaint: `key` (qualified name), `value` (label value), `effect`."""
    obj = as_dict(value, at, errs)
    key = as_str(obj.get("key"), f"{at}.key", errs)
    if not key:
        errs.append(required(f"{at}.key"))
    else:
        add_invalid(errs, f"{at}.key", key, names.is_qualified_name(key))
    text = as_str(obj.get("value"), f"{at}.value", errs)
    add_invalid(errs, f"{at}.value", text, names.is_valid_label_value(text))
    effect = as_str(obj.get("effect"), f"{at}.effect", errs)
    if not effect:
        errs.append(required(f"{at}.effect"))
    elif effect not in TAINT_EFFECTS:
        errs.append(not_supported(f"{at}.effect", effect, TAINT_EFFECTS))


BINDING_CONDITIONS_MAX = 4


def binding_parameters(obj: Obj, at: str, errs: list[FieldError]) -> None:
    """`bindingConditions` and `bindingFailureConditions` of a device or an allocation result
    (validateDeviceBindingParameters): at most 4 each, label names, unique, not overlapping,
    each requiring the other."""
    lists: dict[str, list[str]] = {}
    for key in ("bindingConditions", "bindingFailureConditions"):
        entries = items(obj.get(key), f"{at}.{key}", errs, BINDING_CONDITIONS_MAX)
        seen: list[str] = []
        for _, entry, eat in entries:
            text = as_str(entry, eat, errs)
            add_invalid(errs, eat, text, names.is_qualified_name(text))
            if text in seen:
                errs.append(duplicate(eat, text))
            seen.append(text)
        lists[key] = seen
    conditions, failures = lists["bindingConditions"], lists["bindingFailureConditions"]
    for i, failure in enumerate(failures):
        if failure in conditions:
            errs.append(
                invalid(
                    f"{at}.bindingFailureConditions[{i}]",
                    failure,
                    "bindingFailureConditions must not overlap with bindingConditions",
                )
            )
    if failures and not conditions:
        errs.append(
            invalid(
                f"{at}.bindingConditions",
                conditions,
                "bindingConditions are required to use bindingFailureConditions",
            )
        )
    if conditions and not failures:
        errs.append(
            invalid(
                f"{at}.bindingFailureConditions",
                failures,
                "bindingFailureConditions are required to use bindingConditions",
            )
        )


def request_ref(ref: str, path: str, known: set[str], errs: list[FieldError]) -> None:
    """A reference to a request (`name`) or a subrequest (`name/sub`) of the claim
    (validateRequestNameRef): each segment a DNS label, the whole a known request."""
    segments = ref.split("/")
    if len(segments) <= 2:
        for segment in segments:
            add_invalid(errs, path, segment, names.is_dns1123_label(segment))
    if len(segments) > 2 or ref not in known:
        errs.append(invalid(path, ref, UNKNOWN_REQUEST))


UNKNOWN_REQUEST = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)
