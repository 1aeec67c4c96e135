"""Field selectors (apimachinery pkg/fields): `f=v`, `f==v`, `f!=v`, comma = AND, `\\` escapes.

Each kind supports `metadata.name` and `metadata.namespace` plus the selectable fields its
declaration names (`POD_FIELDS`, ...: upstream's GetAttrs of each strategy); an unknown field is a
400 BadRequest `field label not supported: <f>`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from draplane.api import errors
from draplane.api.meta import Obj

FieldGetter = Callable[[Obj], str]


def _path(*keys: str) -> FieldGetter:
    def get(obj: Obj) -> str:
        value: Any = obj
        for k in keys:
            if not isinstance(value, dict):
                return ""
            value = value.get(k)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _pod_ip(obj: Obj) -> str:
    status = obj.get("status")
    if not isinstance(status, dict):
        return ""
    ips = status.get("podIPs")
    if isinstance(ips, list) and ips and isinstance(ips[0], dict):
        return str(ips[0].get("ip") or "")
    return str(status.get("podIP") or "")


COMMON_FIELDS: dict[str, FieldGetter] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}
POD_FIELDS: dict[str, FieldGetter] = {
    "spec.nodeName": _path("spec", "nodeName"),
    "spec.restartPolicy": _path("spec", "restartPolicy"),
    "spec.schedulerName": _path("spec", "schedulerName"),
    "spec.serviceAccountName": _path("spec", "serviceAccountName"),
    "spec.hostNetwork": lambda o: _path("spec", "hostNetwork")(o) or "false",
    "status.phase": _path("status", "phase"),
    "status.podIP": _pod_ip,
    "status.nominatedNodeName": _path("status", "nominatedNodeName"),
}
_REFERENCE = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _event_source(event: Obj) -> str:
    """`source`: source.component, else the reporting controller (EventToSelectableFields)."""
    return _path("source", "component")(event) or _path("reportingComponent")(event)


EVENT_FIELDS: dict[str, FieldGetter] = {
    **{f"involvedObject.{f}": _path("involvedObject", f) for f in _REFERENCE},
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    "source": _event_source,
    "type": _path("type"),
}
EVENT_V1_FIELDS: dict[str, FieldGetter] = {
    **{f"regarding.{f}": _path("involvedObject", f) for f in _REFERENCE},
    "reason": _path("reason"),
    "reportingController": _path("reportingComponent"),
    "source": _event_source,
    "type": _path("type"),
}
"""events.k8s.io/v1's field labels (AddFieldLabelConversionsForEvent), read from the stored
core/v1 Event."""
NODE_FIELDS: dict[str, FieldGetter] = {
    "spec.unschedulable": lambda o: _path("spec", "unschedulable")(o) or "false",
}
NAMESPACE_FIELDS: dict[str, FieldGetter] = {"status.phase": _path("status", "phase")}
RESOURCE_SLICE_FIELDS: dict[str, FieldGetter] = {
    "spec.nodeName": _path("spec", "nodeName"),
    "spec.driver": _path("spec", "driver"),
}


def selectable(kind_fields: Mapping[str, FieldGetter]) -> dict[str, FieldGetter]:
    """Field name -> getter for every field a field selector may name on a kind with these
    fields of its own (its declaration's, `draplane.apiserver.strategies`)."""
    return {**COMMON_FIELDS, **kind_fields}


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool
    getter: FieldGetter

    def matches(self, obj: Obj) -> bool:
        return (self.getter(obj) == self.value) == self.equal


class FieldSelector:
    """A conjunction of `field=value` / `field!=value` terms over an object's selectable fields."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: tuple[FieldRequirement, ...] = ()) -> None:
        self.requirements = requirements

    @classmethod
    def everything(cls) -> FieldSelector:
        return cls()

    @classmethod
    def parse(cls, text: str, fields: Mapping[str, FieldGetter]) -> FieldSelector:
        """`text` over a kind's selectable `fields` (`selectable(...)`)."""
        reqs: list[FieldRequirement] = []
        for part in sorted(_split_terms(text)):
            if not part:
                continue
            lhs, op, rhs = _split_term(text, part)
            value = _unescape(rhs)
            getter = fields.get(lhs)
            if getter is None:
                raise errors.bad_request(f"field label not supported: {lhs}")
            reqs.append(FieldRequirement(lhs, value, op != "!=", getter))
        return cls(tuple(reqs))

    def matches(self, obj: Obj) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    def exact(self, field: str) -> str | None:
        for r in self.requirements:
            if r.field == field and r.equal:
                return r.value
        return None

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(
            f"{r.field}{'=' if r.equal else '!='}{_escape(r.value)}" for r in self.requirements
        )

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"


def _split_terms(text: str) -> list[str]:
    """Split on commas not preceded by a backslash; escapes stay in the terms."""
    if not text:
        return []
    terms: list[str] = []
    start, escaped = 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(selector: str, term: str) -> tuple[str, str, str]:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    raise errors.bad_request(f"invalid selector: '{selector}'; can't understand '{term}'")


def _unescape(value: str) -> str:
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise errors.bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # apimachinery prints the rune with %v, i.e. as its code point.
            raise errors.bad_request(
                f"invalid field selector: unescaped character in value: {ord(ch)}"
            )
        else:
            out.append(ch)
    if in_slash:
        raise errors.bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
