"""Strategy of apiextensions.k8s.io/v1 CustomResourceDefinitions (apiextensions-apiserver
pkg/registry/customresourcedefinition and its naming and establishing controllers, which
draplane runs as part of every write): create keeps no status but `storedVersions`, adds the
`customresourcecleanup.apiextensions.k8s.io` finalizer, and every create or spec update
decides the `NamesAccepted` and `Established` conditions and `status.acceptedNames` against
the kinds already served in the CRD's group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from draplane.api import crd, kinds, meta
from draplane.api.auth import UserInfo
from draplane.api.errors import FieldError
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation import apiextensions
from draplane.apiserver import printers
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.strategies.context import ServerContext
from draplane.clock import format_time


def _prepare(obj: Obj) -> None:
    spec = obj.get("spec") or {}
    storage = [
        str(v.get("name"))
        for v in spec.get("versions") or []
        if isinstance(v, dict) and v.get("storage")
    ]
    obj["status"] = {"storedVersions": storage[:1]}
    md = obj["metadata"]
    if crd.CLEANUP_FINALIZER not in (md.get("finalizers") or []):
        md["finalizers"] = [*(md.get("finalizers") or []), crd.CLEANUP_FINALIZER]


def _names_taken(registry: ServerContext, obj: Obj) -> dict[str, str]:
    """Kind of name -> the name that another served kind of the group already uses."""
    spec = obj.get("spec") or {}
    group, own = spec.get("group"), meta.name(obj)
    names: dict[str, Any] = spec.get("names") or {}
    taken: dict[str, str] = {}
    for rt in registry.kinds.served():
        if rt.group != group or (rt.custom is not None and rt.custom.crd_name == own):
            continue
        used = {rt.resource, rt.singular, *rt.short_names}
        for field, reason in (("plural", "Plural"), ("singular", "Singular")):
            if names.get(field) in used:
                taken.setdefault(reason, str(names[field]))
        for short in names.get("shortNames") or []:
            if short in used:
                taken.setdefault("ShortNames", str(short))
        if names.get("kind") in (rt.kind, rt.list_kind):
            taken.setdefault("Kind", str(names["kind"]))
        if names.get("listKind") in (rt.kind, rt.list_kind):
            taken.setdefault("ListKind", str(names["listKind"]))
    return taken


def _set_condition(
    status: Obj, old: Obj | None, kind: str, value: str, reason: str, message: str, now: str
) -> None:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != kind]
    previous = crd.condition(old, kind) if old is not None else None
    since = (
        previous.get("lastTransitionTime") if previous and previous.get("status") == value else now
    )
    conditions.append(
        {
            "type": kind,
            "status": value,
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        }
    )
    order = {"NamesAccepted": 0, "Established": 1, "Terminating": 2}
    status["conditions"] = sorted(conditions, key=lambda c: order.get(str(c.get("type")), 3))


async def accept_names(registry: ServerContext, user: UserInfo, obj: Obj, old: Obj | None) -> None:
    """The naming and establishing controllers' decision, written into `obj.status`."""
    # A fresh status: an update's status may still be the stored object's.
    status = obj["status"] = meta.deep_copy(obj.get("status") or {})
    now = format_time(registry.clock.now())
    taken = _names_taken(registry, obj)
    spec = obj.get("spec") or {}
    if taken:
        reason, name = next(iter(taken.items()))
        _set_condition(
            status,
            old,
            "NamesAccepted",
            "False",
            f"{reason}Conflict",
            f'"{name}" is already in use',
            now,
        )
        if not crd.is_established(old or {}):
            _set_condition(
                status,
                old,
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
                now,
            )
            status.setdefault("acceptedNames", {"plural": "", "kind": ""})
        return
    names = {k: v for k, v in (spec.get("names") or {}).items() if v}
    status["acceptedNames"] = names
    _set_condition(status, old, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now)
    _set_condition(
        status,
        old,
        "Established",
        "True",
        "InitialNamesAccepted",
        "the initial names have been accepted",
        now,
    )
    storage = [
        str(v.get("name"))
        for v in spec.get("versions") or []
        if isinstance(v, dict) and v.get("storage")
    ]
    stored = list(status.get("storedVersions") or [])
    for version in storage:
        if version not in stored:
            stored.append(version)
    status["storedVersions"] = stored


def _with_rules(errs: list[FieldError], obj: Obj, old: Obj | None) -> list[FieldError]:
    """The x-kubernetes-validations checks, skipped while the schemas have errors."""
    if any(".schema.openAPIV3Schema" in e.field for e in errs):
        return errs
    versions = (obj.get("spec") or {}).get("versions") or []
    schemas = [v.get("schema") for v in versions if isinstance(v, dict)]
    if not any(crd.has_rules(s.get("openAPIV3Schema")) for s in schemas if isinstance(s, dict)):
        return errs
    # Imported on first use: the CEL binding is large, most servers never need it.
    from draplane.apiserver import crdcel

    return errs + crdcel.crd_rule_errors(obj, old)


@dataclass(frozen=True)
class CRDStrategy(ResourceStrategy):
    """The CRD validation plus the compile and cost checks of its CEL validation rules."""

    def validate_create(self, obj: Obj, schemas: Schemas) -> list[FieldError]:
        return _with_rules(super().validate_create(obj, schemas), obj, None)

    def validate_main_update(self, obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
        return _with_rules(super().validate_main_update(obj, old, schemas), obj, old)


STRATEGIES = (
    CRDStrategy(
        kinds.CUSTOM_RESOURCE_DEFINITIONS,
        validate=apiextensions.validate_crd,
        validate_update=apiextensions.validate_crd_update,
        validate_status=apiextensions.validate_crd_status_update,
        defaults=apiextensions.default_crd,
        printer=printers.CUSTOM_RESOURCE_DEFINITION,
        prepare_for_create=_prepare,
        check_write=accept_names,
    ),
)
