"""ObjectMeta rules for every kind (apimachinery ValidateObjectMeta / ValidateObjectMetaUpdate).

Also the small shared pieces of field validation: a JSON-printing value wrapper for messages,
semantic equality (Go's Semantic.DeepEqual: zero values equal absent ones) and `immutable`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, required
from draplane.api.managed_fields import is_element
from draplane.api.meta import Obj

NameFn = Callable[..., list[str]]
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_FIELD_MANAGER_MAX = 128


@dataclass(frozen=True)
class Shown:
    """A structured value in a FieldError, printed as compact JSON like Go prints structs."""

    value: Any

    def __str__(self) -> str:
        return orjson.dumps(self.value).decode()


def too_long(path: str, value: Any, limit: int) -> FieldError:
    return FieldError("FieldValueTooLong", path, f"must have at most {limit} bytes", value)


def type_invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueTypeInvalid", path, detail, shown(value))


def shown(value: Any) -> Any:
    return Shown(value) if isinstance(value, dict | list) else value


def _is_zero(value: Any) -> bool:
    return value is None or value == "" or value is False or value == 0 or value in ({}, [])


def prune(value: Any) -> Any:
    """Drop zero-valued map entries recursively, so `{"a": []}` compares equal to `{}`."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = prune(v)
            if not _is_zero(p):
                out[k] = p
        return out
    if isinstance(value, list):
        return [prune(v) for v in value]
    return value


def semantic_equal(a: Any, b: Any) -> bool:
    return a == b or prune(a) == prune(b) or (_is_zero(prune(a)) and _is_zero(prune(b)))


def immutable(path: str, new: Any, old: Any) -> list[FieldError]:
    if semantic_equal(new, old):
        return []
    return [invalid(path, shown(new), "field is immutable")]


def as_dict(value: Any, path: str, errs: list[FieldError]) -> Obj:
    """`value` when it is an object (None -> {}); otherwise records a type error."""
    if isinstance(value, dict):
        return value
    if value is not None:
        errs.append(type_invalid(path, value, "must be an object"))
    return {}


def field_dict(obj: Obj, key: str) -> Obj:
    """`obj[key]` when it is an object, else {} (for reading stored objects)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def as_list(value: Any, path: str, errs: list[FieldError]) -> list[Any]:
    if isinstance(value, list):
        return value
    if value is not None:
        errs.append(type_invalid(path, value, "must be a list"))
    return []


def as_str(value: Any, path: str, errs: list[FieldError]) -> str:
    if isinstance(value, str):
        return value
    if value is not None:
        errs.append(type_invalid(path, value, "must be a string"))
    return ""


def add_invalid(errs: list[FieldError], path: str, value: Any, msgs: list[str]) -> None:
    """One Invalid cause per message, as Kubernetes reports name-rule failures."""
    for msg in msgs:
        errs.append(invalid(path, value, msg))


def name_errors(path: str, value: str, fn: NameFn) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in fn(value)]


def validate_object_meta(
    md: Obj,
    *,
    namespaced: bool,
    name_fn: NameFn,
    path: str = "metadata",
    kube_finalizers: bool = True,
) -> list[FieldError]:
    """Create-time metadata rules."""
    errs: list[FieldError] = []
    generate_name = as_str(md.get("generateName"), f"{path}.generateName", errs)
    if generate_name:
        add_invalid(
            errs, f"{path}.generateName", generate_name, name_fn(generate_name, prefix=True)
        )
    name = as_str(md.get("name"), f"{path}.name", errs)
    if not name:
        errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        add_invalid(errs, f"{path}.name", name, name_fn(name))
    namespace = as_str(md.get("namespace"), f"{path}.namespace", errs)
    if namespaced:
        if not namespace:
            errs.append(required(f"{path}.namespace"))
        else:
            errs.extend(name_errors(f"{path}.namespace", namespace, names.is_dns1123_label))
    elif namespace:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    generation = md.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(invalid(f"{path}.generation", generation, "must be greater than or equal to 0"))
    errs.extend(validate_meta_content(md, path=path, kube_finalizers=kube_finalizers))
    return errs


def validate_meta_content(
    md: Obj, *, path: str = "metadata", kube_finalizers: bool = True
) -> list[FieldError]:
    """Labels, annotations, owner references and finalizers (create and every update).
    `kube_finalizers`: finalizer names without a `/` must be standard ones (core's
    validateKubeFinalizerName; apiextensions objects skip it)."""
    errs: list[FieldError] = []
    # Absent fields are the common case on the create hot path: skip their calls.
    if md.get("labels") is not None:
        errs.extend(validate_labels(md["labels"], f"{path}.labels"))
    if md.get("annotations") is not None:
        errs.extend(validate_annotations(md["annotations"], f"{path}.annotations"))
    if md.get("ownerReferences") is not None:
        errs.extend(_validate_owner_references(md["ownerReferences"], f"{path}.ownerReferences"))
    if md.get("finalizers") is not None:
        errs.extend(
            _validate_finalizers(md["finalizers"], f"{path}.finalizers", kube=kube_finalizers)
        )
    if md.get("managedFields") is not None:
        errs.extend(_validate_managed_fields(md["managedFields"], f"{path}.managedFields"))
    return errs


def _validate_managed_fields(entries: Any, path: str) -> list[FieldError]:
    """ValidateManagedFields, and FieldsV1 that server-side apply can read."""
    errs: list[FieldError] = []
    for i, entry in enumerate(as_list(entries, path, errs)):
        p = f"{path}[{i}]"
        entry = as_dict(entry, p, errs)
        operation = entry.get("operation")
        if operation not in ("Apply", "Update"):
            errs.append(invalid(f"{p}.operation", operation, "must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType")
        if fields_type and fields_type != "FieldsV1":
            errs.append(invalid(f"{p}.fieldsType", fields_type, "must be `FieldsV1`"))
        manager = entry.get("manager")
        if isinstance(manager, str) and len(manager) > _FIELD_MANAGER_MAX:
            errs.append(too_long(f"{p}.manager", "", _FIELD_MANAGER_MAX))
        bad = _bad_fields_element(entry.get("fieldsV1"))
        if bad is not None:
            errs.append(invalid(f"{p}.fieldsV1", bad, "not a FieldsV1 path element"))
    return errs


def _bad_fields_element(fields: Any) -> str | None:
    """The first key of a FieldsV1 tree that is neither "." nor a readable path element."""
    pending = [fields] if isinstance(fields, dict) else []
    while pending:
        node = pending.pop()
        for key, child in node.items():
            if key != "." and not is_element(key):
                return str(key)
            if isinstance(child, dict):
                pending.append(child)
    return None


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for k, v in as_dict(labels, path, errs).items():
        add_invalid(errs, path, k, names.is_qualified_name(k))
        if not isinstance(v, str):
            errs.append(type_invalid(path, v, "label values must be strings"))
            continue
        add_invalid(errs, path, v, names.is_valid_label_value(v))
    return errs


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    total = 0
    for k, v in as_dict(annotations, path, errs).items():
        add_invalid(errs, path, k, names.is_qualified_name(k.lower()))
        if not isinstance(v, str):
            errs.append(type_invalid(path, v, "annotation values must be strings"))
            continue
        total += len(k.encode()) + len(v.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _validate_owner_references(refs: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    first_controller = ""
    for ref in as_list(refs, path, errs):
        if not isinstance(ref, dict):
            errs.append(type_invalid(path, ref, "must be an object"))
            continue
        api_version = str(ref.get("apiVersion") or "")
        if not api_version.rpartition("/")[2]:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errs.append(invalid(f"{path}.{key}", "", f"{key} must not be empty"))
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        shown(refs),
                        "Only one reference can have Controller set to true. Found "
                        f'"true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


def _validate_finalizers(finalizers: Any, path: str, *, kube: bool = True) -> list[FieldError]:
    errs: list[FieldError] = []
    values = as_list(finalizers, path, errs)
    for i, f in enumerate(values):
        if not isinstance(f, str):
            errs.append(type_invalid(f"{path}[{i}]", f, "must be a string"))
            continue
        add_invalid(errs, path, f, names.is_qualified_name(f))
        if kube and "/" not in f and f not in STANDARD_FINALIZERS:
            errs.append(
                invalid(
                    f"{path}[{i}]",
                    f,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    if "orphan" in values and "foregroundDeletion" in values:
        errs.append(
            invalid(
                path, shown(values), "finalizer orphan and foregroundDeletion cannot be both set"
            )
        )
    return errs


def validate_object_meta_update(new: Obj, old: Obj, *, path: str = "metadata") -> list[FieldError]:
    """Update-time metadata rules: identity fields are immutable, deletion is one-way.

    Server-managed fields the client left out (uid, creationTimestamp, deletionTimestamp) are
    not errors: the registry copies them from the stored object, as Kubernetes' BeforeUpdate does.
    """
    errs: list[FieldError] = []
    for key in ("name", "namespace"):
        if (new.get(key) or "") != (old.get(key) or ""):
            errs.append(invalid(f"{path}.{key}", new.get(key) or "", "field is immutable"))
    for key in ("uid", "creationTimestamp", "deletionGracePeriodSeconds"):
        if new.get(key) is not None and new.get(key) != old.get(key):
            errs.append(invalid(f"{path}.{key}", new.get(key), "field is immutable"))
    deletion = new.get("deletionTimestamp")
    if deletion is not None and deletion != old.get("deletionTimestamp"):
        errs.append(invalid(f"{path}.deletionTimestamp", deletion, "field is immutable"))
    new_gen, old_gen = new.get("generation"), old.get("generation")
    if isinstance(new_gen, int) and isinstance(old_gen, int) and new_gen < old_gen:
        errs.append(invalid(f"{path}.generation", new_gen, "must not be decremented"))
    if old.get("deletionTimestamp"):
        old_finalizers = set(old.get("finalizers") or [])
        added = sorted(
            f
            for f in (new.get("finalizers") or [])
            if isinstance(f, str) and f not in old_finalizers
        )
        if added:
            errs.append(
                forbidden(
                    f"{path}.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    "found new finalizers []string{" + ", ".join(f'"{f}"' for f in added) + "}",
                )
            )
    return errs
