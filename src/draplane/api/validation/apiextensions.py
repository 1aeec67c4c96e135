"""Defaulting and validation of apiextensions.k8s.io/v1 CustomResourceDefinitions
(apiextensions-apiserver pkg/apis/apiextensions/validation and v1 defaults): names, versions,
scope, subresources, printer columns and the structural-schema rules of each version's
`openAPIV3Schema` (every node typed, no additionalProperties beside properties, metadata only
name and generateName, no uniqueItems)."""

from __future__ import annotations

import re
from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import (
    add_invalid,
    immutable,
    type_invalid,
    validate_object_meta,
    validate_object_meta_update,
)

_KIND_RE = re.compile(r"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$")
_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_COLUMN_TYPES = ["integer", "number", "string", "boolean", "date"]
APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
_SCHEMA_TYPES = {"object", "array", "string", "integer", "number", "boolean"}


def default_crd(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    names_ = spec.get("names")
    if isinstance(names_, dict) and isinstance(names_.get("kind"), str) and names_["kind"]:
        names_.setdefault("singular", names_["kind"].lower())
        names_.setdefault("listKind", names_["kind"] + "List")
    conversion = spec.setdefault("conversion", {"strategy": "None"})
    if isinstance(conversion, dict):
        conversion.setdefault("strategy", "None")


def _dns1035(value: str) -> list[str]:
    if _DNS1035_RE.match(value) and len(value) <= 63:
        return []
    return [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def _kind_errors(value: str, path: str, errs: list[FieldError]) -> None:
    if not _KIND_RE.match(value):
        errs.append(
            invalid(
                path,
                value,
                "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
            )
        )


def _names(n: Any, errs: list[FieldError], path: str = "spec.names") -> None:
    if not isinstance(n, dict):
        errs.append(required(path))
        return
    plural, singular = n.get("plural") or "", n.get("singular") or ""
    kind, list_kind = n.get("kind") or "", n.get("listKind") or ""
    if not plural:
        errs.append(required(f"{path}.plural"))
    else:
        add_invalid(errs, f"{path}.plural", plural, names.is_dns1123_label(plural))
    if singular:
        add_invalid(errs, f"{path}.singular", singular, names.is_dns1123_label(singular))
    if not kind:
        errs.append(required(f"{path}.kind"))
    else:
        _kind_errors(str(kind), f"{path}.kind", errs)
    if not list_kind:
        errs.append(required(f"{path}.listKind"))
    else:
        _kind_errors(str(list_kind), f"{path}.listKind", errs)
        if kind and kind == list_kind:
            errs.append(
                invalid(f"{path}.listKind", list_kind, "kind and listKind may not be the same")
            )
    for field in ("shortNames", "categories"):
        for i, item in enumerate(n.get(field) or []):
            add_invalid(errs, f"{path}.{field}[{i}]", item, names.is_dns1123_label(str(item)))


def validate_crd(obj: Obj) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta(
        md, namespaced=False, name_fn=names.name_is_dns_subdomain, kube_finalizers=False
    )
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [*errs, required("spec")]
    group = spec.get("group") or ""
    names_ = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    plural = (names_ or {}).get("plural") or ""
    if md.get("name") != f"{plural}.{group}":
        errs.append(
            invalid("metadata.name", md.get("name"), 'must be spec.names.plural+"."+spec.group')
        )
    if not group:
        errs.append(required("spec.group"))
    else:
        add_invalid(errs, "spec.group", group, names.is_dns1123_subdomain(group))
        if "." not in str(group):
            errs.append(invalid("spec.group", group, "should be a domain with at least one dot"))
        protected = str(group) == "k8s.io" or str(group).endswith((".k8s.io", ".kubernetes.io"))
        annotations = md.get("annotations") if isinstance(md.get("annotations"), dict) else {}
        if protected and not (annotations or {}).get(APPROVAL_ANNOTATION):
            errs.append(
                required(
                    f"metadata.annotations[{APPROVAL_ANNOTATION}]",
                    f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", '
                    "see https://github.com/kubernetes/enhancements/pull/1111",
                )
            )
    _names(spec.get("names"), errs)
    scope = spec.get("scope")
    if not scope:
        errs.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    conversion = spec.get("conversion") or {}
    strategy = conversion.get("strategy") if isinstance(conversion, dict) else None
    if strategy not in (None, "None", "Webhook"):
        errs.append(not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    elif strategy == "Webhook":
        errs.append(
            forbidden("spec.conversion.strategy", "conversion webhooks are not served by draplane")
        )
    _versions(spec.get("versions"), errs)
    return errs


def _versions(versions: Any, errs: list[FieldError]) -> None:
    if not isinstance(versions, list) or not versions:
        errs.append(
            invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
        return
    storage, seen, served = 0, set(), False
    for i, v in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(v, dict):
            errs.append(invalid(path, v, "must be an object"))
            continue
        name = str(v.get("name") or "")
        if not name:
            errs.append(required(f"{path}.name"))
        else:
            add_invalid(errs, f"{path}.name", name, _dns1035(name))
            if name in seen:
                errs.append(invalid("spec.versions", versions, "must contain unique version names"))
            seen.add(name)
        storage += 1 if v.get("storage") else 0
        served = served or bool(v.get("served"))
        _version(v, path, errs)
    if storage != 1:
        errs.append(
            invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    if not served:
        errs.append(
            invalid("spec.versions", versions, "must have at least one version marked as served")
        )


def _version(v: Obj, path: str, errs: list[FieldError]) -> None:
    schema = (
        (v.get("schema") or {}).get("openAPIV3Schema")
        if isinstance(v.get("schema"), dict)
        else None
    )
    spath = f"{path}.schema.openAPIV3Schema"
    if not isinstance(schema, dict):
        errs.append(required(spath, "schemas are required"))
    else:
        if schema.get("type") != "object":
            errs.append(required(f"{spath}.type", "must be object at the root"))
        _structural(schema, spath, errs, root=True)
    subresources = v.get("subresources") or {}
    scale = subresources.get("scale") if isinstance(subresources, dict) else None
    if isinstance(scale, dict):
        spec_path, status_path = (
            scale.get("specReplicasPath") or "",
            scale.get("statusReplicasPath") or "",
        )
        sp = f"{path}.subresources.scale"
        if not spec_path:
            errs.append(required(f"{sp}.specReplicasPath"))
        elif not str(spec_path).startswith(".spec."):
            errs.append(
                invalid(f"{sp}.specReplicasPath", spec_path, "should be a json path under .spec")
            )
        if not status_path:
            errs.append(required(f"{sp}.statusReplicasPath"))
        elif not str(status_path).startswith(".status."):
            errs.append(
                invalid(
                    f"{sp}.statusReplicasPath", status_path, "should be a json path under .status"
                )
            )
        selector = scale.get("labelSelectorPath")
        if selector and not str(selector).startswith((".spec.", ".status.")):
            errs.append(
                invalid(
                    f"{sp}.labelSelectorPath",
                    selector,
                    "should be a json path under either .spec or .status",
                )
            )
    for i, col in enumerate(v.get("additionalPrinterColumns") or []):
        cp = f"{path}.additionalPrinterColumns[{i}]"
        if not isinstance(col, dict):
            errs.append(invalid(cp, col, "must be an object"))
            continue
        if not col.get("name"):
            errs.append(required(f"{cp}.name"))
        if col.get("type") not in _COLUMN_TYPES:
            errs.append(not_supported(f"{cp}.type", col.get("type"), _COLUMN_TYPES))
        if not col.get("jsonPath"):
            errs.append(required(f"{cp}.JSONPath"))


_NUMBER, _INT, _BOOL, _STR = "a number", "an integer", "a boolean", "a string"
_KEYWORD_TYPES: dict[str, str] = {
    **dict.fromkeys(("minimum", "maximum", "multipleOf"), _NUMBER),
    **dict.fromkeys(
        ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"),
        _INT,
    ),
    **dict.fromkeys(
        (
            "exclusiveMinimum",
            "exclusiveMaximum",
            "nullable",
            "uniqueItems",
            "x-kubernetes-int-or-string",
            "x-kubernetes-preserve-unknown-fields",
            "x-kubernetes-embedded-resource",
        ),
        _BOOL,
    ),
    **dict.fromkeys(
        ("type", "pattern", "format", "description", "title", "x-kubernetes-list-type"), _STR
    ),
}


def _keyword_errors(s: Obj, path: str) -> list[FieldError]:
    """Keywords whose value has the wrong JSON type (the decoding of JSONSchemaProps)."""
    errs: list[FieldError] = []
    checks = {
        _NUMBER: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        _INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
        _BOOL: lambda v: isinstance(v, bool),
        _STR: lambda v: isinstance(v, str),
    }
    for key, kind in _KEYWORD_TYPES.items():
        if key in s and s[key] is not None and not checks[kind](s[key]):
            errs.append(type_invalid(f"{path}.{key}", s[key], f"must be {kind}"))
    for key in ("required", "x-kubernetes-list-map-keys"):
        value = s.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            errs.append(type_invalid(f"{path}.{key}", value, "must be a list of strings"))
    if s.get("enum") is not None and not isinstance(s["enum"], list):
        errs.append(type_invalid(f"{path}.enum", s["enum"], "must be a list"))
    props = s.get("properties")
    if props is not None and not (
        isinstance(props, dict) and all(isinstance(v, dict) for v in props.values())
    ):
        errs.append(type_invalid(f"{path}.properties", props, "must be a map of schemas"))
    for key in ("items", "not"):
        if s.get(key) is not None and not isinstance(s[key], dict):
            errs.append(type_invalid(f"{path}.{key}", s[key], "must be a schema"))
    additional = s.get("additionalProperties")
    if additional is not None and not isinstance(additional, dict | bool):
        errs.append(
            type_invalid(
                f"{path}.additionalProperties", additional, "must be a schema or a boolean"
            )
        )
    return errs


def _structural(
    s: Obj, path: str, errs: list[FieldError], *, root: bool = False, meta: bool = False
) -> None:
    keyword_errors = _keyword_errors(s, path)
    if keyword_errors:
        errs.extend(keyword_errors)
        return
    t = s.get("type")
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    preserve = s.get("x-kubernetes-preserve-unknown-fields")
    if preserve is False:
        errs.append(
            invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"
            )
        )
    if t is not None and t not in _SCHEMA_TYPES:
        errs.append(not_supported(f"{path}.type", t, sorted(_SCHEMA_TYPES)))
    if int_or_string and t:
        errs.append(
            forbidden(
                f"{path}.type",
                "must be empty to be structural when x-kubernetes-int-or-string is true",
            )
        )
    if not t and not int_or_string and not preserve and not root:
        errs.append(required(f"{path}.type", "must not be empty for specified object fields"))
    if s.get("x-kubernetes-embedded-resource") and t != "object":
        errs.append(
            required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true")
        )
    if s.get("uniqueItems") is True:
        errs.append(
            forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    props = s.get("properties")
    additional = s.get("additionalProperties")
    if isinstance(props, dict) and props and additional is not None:
        errs.append(
            forbidden(
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    if t == "array" and not isinstance(s.get("items"), dict):
        errs.append(required(f"{path}.items", "must be specified"))
    for key in ("allOf", "anyOf", "oneOf", "not"):
        if key in s and t is None and not int_or_string:
            pass  # value validations only; structural nodes are checked above
    if isinstance(props, dict):
        for name, sub in props.items():
            p = f"{path}.properties[{name}]"
            if root and name == "metadata" and isinstance(sub, dict):
                extra = set(sub) - {"type", "properties"} or set(sub.get("properties") or {}) - {
                    "name",
                    "generateName",
                }
                if extra or sub.get("type") not in (None, "object"):
                    errs.append(
                        forbidden(
                            p,
                            "must not specify anything other than name and generateName, but "
                            "metadata is implicitly specified",
                        )
                    )
                continue
            if isinstance(sub, dict):
                _structural(sub, p, errs)
            else:
                errs.append(invalid(p, sub, "must be an object"))
    if isinstance(additional, dict):
        _structural(additional, f"{path}.additionalProperties", errs)
    if isinstance(s.get("items"), dict):
        _structural(s["items"], f"{path}.items", errs)


def validate_crd_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_crd(obj))
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if isinstance(spec, dict) and isinstance(old_spec, dict):
        errs.extend(immutable("spec.group", spec.get("group"), old_spec.get("group")))
        errs.extend(immutable("spec.scope", spec.get("scope"), old_spec.get("scope")))
    return errs


def validate_crd_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    status = obj.get("status") or {}
    stored = status.get("storedVersions") if isinstance(status, dict) else None
    versions = {
        str(v.get("name"))
        for v in (obj.get("spec") or {}).get("versions") or []
        if isinstance(v, dict)
    }
    for i, v in enumerate(stored or []):
        if v not in versions:
            errs.append(invalid(f"status.storedVersions[{i}]", v, "must appear in spec.versions"))
    return errs
