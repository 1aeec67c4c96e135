"""A custom resource against its CRD's structural OpenAPI v3 schema: pruning, defaulting and
validation, as apiextensions-apiserver runs them (pkg/apiserver/schema/{pruning,defaulting},
kube-openapi's validate with apiextensions' field-path errors).

Written by hand rather than through a JSON-schema library: the structural-schema rules
(pruning of unknown fields, `x-kubernetes-preserve-unknown-fields`,
`x-kubernetes-int-or-string`, `x-kubernetes-embedded-resource`, list-type set/map, nullable with
defaults) and upstream's error wording (`spec.replicas in body must be of type integer:
"string"`) are specific to Kubernetes; see docs/dependencies.md for the measurement.
`x-kubernetes-validations` (CEL) are evaluated after this validation, in
`draplane.apiserver.crdcel`.
"""

from __future__ import annotations

import copy
import re
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson

from draplane.api import errors
from draplane.api.errors import FieldError

_ROOT_KEEP = ("apiVersion", "kind", "metadata")
_JSON_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


def _sub(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (
        isinstance(v, float) and v.is_integer()
    )


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _type_ok(schema: dict[str, Any], value: Any) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return _is_int(value) or isinstance(value, str)
    t = schema.get("type")
    if not t:
        return True
    if t == "integer":
        return _is_int(value)
    if t == "number":
        return _is_number(value)
    py = _JSON_TYPES.get(str(t))
    return py is None or isinstance(value, py)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _json_type(value: Any) -> str:
    """The JSON type of `value` as kube-openapi names it in a type error."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


# --- pruning and defaulting -------------------------------------------------------------------


def prune(schema: Any, obj: Any, *, root: bool = True) -> None:
    """Drop, in place, every field `schema` does not specify (apiVersion, kind and metadata
    are kept at the root and in embedded resources)."""
    if isinstance(schema, dict):
        _prune(schema, obj, root)


def _prune(schema: dict[str, Any], value: Any, keep_meta: bool) -> None:
    if isinstance(value, dict):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        embedded = keep_meta or bool(schema.get("x-kubernetes-embedded-resource"))
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        for key in list(value):
            if embedded and key in _ROOT_KEEP:
                continue
            if isinstance(props, dict) and key in props:
                _prune(props[key] or {}, value[key], False)
            elif isinstance(additional, dict):
                _prune(additional, value[key], False)
            elif not preserve and additional is not True:
                del value[key]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _prune(schema["items"], item, False)


def unknown_fields(schema: Any, obj: Any) -> list[str]:
    """The paths `prune` would drop (`spec.x`, `spec.items[0].y`), in document order: what
    fieldValidation Strict reports and Warn warns about."""
    out: list[str] = []
    if isinstance(schema, dict):
        _unknown(schema, obj, True, "", out)
    return out


def _unknown(
    schema: dict[str, Any], value: Any, keep_meta: bool, path: str, out: list[str]
) -> None:
    if isinstance(value, dict):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        embedded = keep_meta or bool(schema.get("x-kubernetes-embedded-resource"))
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        prefix = f"{path}." if path else ""
        for key, item in value.items():
            if embedded and key in _ROOT_KEEP:
                continue
            if isinstance(props, dict) and key in props:
                _unknown(props[key] or {}, item, False, prefix + key, out)
            elif isinstance(additional, dict):
                _unknown(additional, item, False, prefix + key, out)
            elif not preserve and additional is not True:
                out.append(prefix + key)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _unknown(schema["items"], item, False, f"{path}[{i}]", out)


def default(schema: Any, obj: Any) -> None:
    """Fill in, in place, the `default` of every missing or null (non-nullable) property."""
    if isinstance(schema, dict):
        _default(schema, obj)


def _default(schema: dict[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if not isinstance(sub, dict):
                    continue
                missing = key not in value or (value[key] is None and not sub.get("nullable"))
                if missing and "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
                elif key in value and value[key] is None and not sub.get("nullable"):
                    pass  # reported by validation
                if key in value:
                    _default(sub, value[key])
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for item in value.values():
                _default(additional, item)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(schema["items"], item)


# --- validation -------------------------------------------------------------------------------


def validate(schema: Any, obj: Any) -> list[FieldError]:
    """The FieldErrors of `obj` against `schema` (root metadata is validated as ObjectMeta
    elsewhere, so it is skipped here)."""
    if not isinstance(schema, dict):
        return []
    errs: list[FieldError] = []
    if isinstance(obj, dict):
        top = {k: v for k, v in obj.items() if k not in _ROOT_KEEP}
        props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _ROOT_KEEP}
        _validate({**schema, "properties": props}, top, "", errs)
    return errs


def _validate(schema: dict[str, Any], value: Any, path: str, errs: list[FieldError]) -> None:
    if value is None:
        if schema.get("nullable") or not (schema.get("type") or _int_or_string(schema)):
            return
        errs.append(_type_error(schema, path, value))
        return
    if not _type_ok(schema, value):
        errs.append(_type_error(schema, path, value))
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        errs.append(errors.not_supported(path, value, [_shown(e) for e in enum]))
    if isinstance(value, str):
        _string(schema, value, path, errs)
    elif _is_number(value):
        _number(schema, value, path, errs)
    elif isinstance(value, list):
        _array(schema, value, path, errs)
    elif isinstance(value, dict):
        _object(schema, value, path, errs)


def _int_or_string(schema: dict[str, Any]) -> bool:
    return bool(schema.get("x-kubernetes-int-or-string"))


def _type_error(schema: dict[str, Any], path: str, value: Any) -> FieldError:
    t = "integer-or-string" if _int_or_string(schema) else str(schema.get("type"))
    actual = _json_type(value)
    return errors.invalid(path, actual, f'{path} in body must be of type {t}: "{actual}"')


_FORMATS: dict[str, Any] = {
    "int32": None,
    "int64": None,
    "float": None,
    "double": None,
    "byte": re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"),
    "uuid": re.compile(
        r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    ),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "ipv4": re.compile(r"^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$"),
    "hostname": re.compile(
        r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", re.IGNORECASE
    ),
}


def _format_ok(fmt: str, value: str) -> bool:
    if fmt == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return False
        return "T" in value.upper()
    check = _FORMATS.get(fmt)
    return check is None or check.match(value) is not None


@lru_cache(maxsize=512)
def _pattern(text: str) -> re.Pattern[str] | None:
    try:
        return re.compile(text)
    except re.error:
        return None


def _string(schema: dict[str, Any], value: str, path: str, errs: list[FieldError]) -> None:
    if _int_or_string(schema):
        return
    max_len, min_len = schema.get("maxLength"), schema.get("minLength")
    if isinstance(max_len, int) and len(value) > max_len:
        errs.append(FieldError("FieldValueTooLong", path, f"may not be longer than {max_len}"))
    if isinstance(min_len, int) and len(value) < min_len:
        errs.append(
            errors.invalid(path, value, f"{path} in body should be at least {min_len} chars long")
        )
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        compiled = _pattern(pattern)
        if compiled is not None and compiled.search(value) is None:
            errs.append(errors.invalid(path, value, f"{path} in body should match '{pattern}'"))
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt and not _format_ok(fmt, value):
        errs.append(errors.invalid(path, value, f'{path} in body must be of type {fmt}: "{value}"'))


def _number(schema: dict[str, Any], value: float, path: str, errs: list[FieldError]) -> None:
    minimum: Any = schema.get("minimum")
    maximum: Any = schema.get("maximum")
    if _is_number(minimum):
        if schema.get("exclusiveMinimum") and value <= minimum:
            errs.append(
                errors.invalid(path, value, f"{path} in body should be greater than {minimum}")
            )
        elif value < minimum:
            errs.append(
                errors.invalid(
                    path, value, f"{path} in body should be greater than or equal to {minimum}"
                )
            )
    if _is_number(maximum):
        if schema.get("exclusiveMaximum") and value >= maximum:
            errs.append(
                errors.invalid(path, value, f"{path} in body should be less than {maximum}")
            )
        elif value > maximum:
            errs.append(
                errors.invalid(
                    path, value, f"{path} in body should be less than or equal to {maximum}"
                )
            )
    multiple = schema.get("multipleOf")
    if _is_number(multiple) and multiple and (value / multiple) % 1:
        errs.append(
            errors.invalid(path, value, f"{path} in body should be a multiple of {multiple}")
        )


def _array(schema: dict[str, Any], value: list[Any], path: str, errs: list[FieldError]) -> None:
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    if isinstance(max_items, int) and len(value) > max_items:
        errs.append(errors.too_many(path, len(value), max_items))
    if isinstance(min_items, int) and len(value) < min_items:
        errs.append(
            errors.invalid(
                path, len(value), f"{path} in body should have at least {min_items} items"
            )
        )
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(items, item, f"{path}[{i}]", errs)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set" or schema.get("uniqueItems"):
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                errs.append(errors.duplicate(f"{path}[{i}]", item))
            seen.append(item)
    elif list_type == "map":
        keys = [str(k) for k in schema.get("x-kubernetes-list-map-keys") or []]
        seen_keys: list[tuple[Any, ...]] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key = tuple(item.get(k) for k in keys)
            if key in seen_keys:
                shown = orjson.dumps({k: item.get(k) for k in keys}).decode()
                errs.append(errors.duplicate(f"{path}[{i}]", _GoValue(shown)))
            seen_keys.append(key)


class _GoValue:
    """A value printed as Go's %#v prints a map (list-map key duplicates)."""

    def __init__(self, text: str) -> None:
        self.text = "map[string]interface {}" + text

    def __str__(self) -> str:
        return self.text


def _object(
    schema: dict[str, Any], value: dict[str, Any], path: str, errs: list[FieldError]
) -> None:
    for name in schema.get("required") or []:
        if name not in value:
            errs.append(errors.required(_sub(path, str(name))))
    min_p, max_p = schema.get("minProperties"), schema.get("maxProperties")
    if isinstance(max_p, int) and len(value) > max_p:
        errs.append(errors.too_many(path, len(value), max_p))
    if isinstance(min_p, int) and len(value) < min_p:
        errs.append(
            errors.invalid(
                path, len(value), f"{path} in body should have at least {min_p} properties"
            )
        )
    if schema.get("x-kubernetes-embedded-resource"):
        for key in ("apiVersion", "kind"):
            if not value.get(key):
                errs.append(errors.required(_sub(path, key), "must not be empty"))
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        sub = props.get(key)
        if isinstance(sub, dict):
            _validate(sub, item, _sub(path, key), errs)
        elif isinstance(additional, dict):
            _validate(additional, item, _sub(path, key), errs)
