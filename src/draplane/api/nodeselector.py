"""v1 NodeSelector matching (component-helpers' nodeaffinity): terms ORed, requirements ANDed.

Used for ResourceClaim `status.allocation.availableOnNodes`, ResourceClass `suitableNodes` and the
scheduler's NodeAffinity. A term without requirements matches nothing; an invalid selector raises
ValueError at parse time, so matching never fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from draplane.api import selectors
from draplane.api.meta import Obj

_LABEL_OPERATORS = {
    "In": selectors.IN,
    "NotIn": selectors.NOT_IN,
    "Exists": selectors.EXISTS,
    "DoesNotExist": selectors.DOES_NOT_EXIST,
    "Gt": selectors.GREATER_THAN,
    "Lt": selectors.LESS_THAN,
}
_SUPPORTED_LABEL_OPERATORS = ", ".join(f'"{o}"' for o in _LABEL_OPERATORS)
_SUPPORTED_FIELD_OPERATORS = '"In", "NotIn"'


@dataclass(frozen=True)
class FieldTerm:
    """A matchFields requirement: In/NotIn with exactly one value."""

    key: str
    value: str
    equal: bool

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.key, "") == self.value) == self.equal


@dataclass(frozen=True)
class NodeSelectorTerm:
    labels: tuple[selectors.Requirement, ...]
    fields: tuple[FieldTerm, ...]

    def matches(self, labels: Mapping[str, str], fields: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.labels) and all(
            f.matches(fields) for f in self.fields
        )


class NodeSelector:
    """A compiled v1 NodeSelector."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[NodeSelectorTerm, ...]) -> None:
        self.terms = terms

    @classmethod
    def parse(cls, sel: Obj) -> NodeSelector:
        if not isinstance(sel, dict):
            raise ValueError("node selector must be an object")
        raw_terms = sel.get("nodeSelectorTerms") or []
        if not isinstance(raw_terms, list):
            raise ValueError("nodeSelectorTerms: must be a list")
        problems: list[str] = []
        terms: list[NodeSelectorTerm] = []
        for i, raw in enumerate(raw_terms):
            term = _parse_term(raw, path=f"nodeSelectorTerms[{i}]", problems=problems)
            if term is not None:
                terms.append(term)
        if problems:
            raise ValueError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")
        return cls(tuple(terms))

    def matches(self, node: Obj) -> bool:
        md = node.get("metadata") or {}
        labels = md.get("labels") or {}
        fields = {"metadata.name": md.get("name") or ""}
        return any(t.matches(labels, fields) for t in self.terms)


def match_node_selector_terms(node: Obj, selector: Obj) -> bool:
    """Whether `node` matches the v1 NodeSelector `selector`; an invalid selector matches none."""
    try:
        return NodeSelector.parse(selector).matches(node)
    except ValueError:
        return False


def match_term(node: Obj, term: Obj) -> bool:
    """Whether `node` matches one NodeSelectorTerm (preferred-affinity scoring needs this)."""
    try:
        return NodeSelector.parse({"nodeSelectorTerms": [term]}).matches(node)
    except ValueError:
        return False


def _parse_term(raw: Any, *, path: str, problems: list[str]) -> NodeSelectorTerm | None:
    if not isinstance(raw, dict):
        problems.append(f"{path}: must be an object")
        return None
    exprs = raw.get("matchExpressions") or []
    fields = raw.get("matchFields") or []
    if not isinstance(exprs, list) or not isinstance(fields, list):
        problems.append(f"{path}: matchExpressions and matchFields must be lists")
        return None
    if not exprs and not fields:
        return None
    labels = tuple(_label_requirements(exprs, path=f"{path}.matchExpressions", problems=problems))
    field_terms = tuple(_field_terms(fields, path=f"{path}.matchFields", problems=problems))
    return NodeSelectorTerm(labels, field_terms)


def _label_requirements(
    exprs: Iterable[Any], *, path: str, problems: list[str]
) -> Iterable[selectors.Requirement]:
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        if not isinstance(expr, dict):
            problems.append(f"{p}: must be an object")
            continue
        op = _LABEL_OPERATORS.get(expr.get("operator"))  # type: ignore[arg-type]
        if op is None:
            problems.append(
                f'{p}.operator: Unsupported value: "{expr.get("operator")}": '
                f"supported values: {_SUPPORTED_LABEL_OPERATORS}"
            )
            continue
        key = expr.get("key")
        values = expr.get("values") or []
        if not isinstance(key, str) or not isinstance(values, list):
            problems.append(f"{p}: key must be a string and values a list")
            continue
        values = [str(v) for v in values]
        found = selectors.requirement_problems(key, op, values, path=p)
        if found:
            problems.extend(found)
            continue
        yield selectors.Requirement(key, op, tuple(values))


def _field_terms(exprs: Iterable[Any], *, path: str, problems: list[str]) -> Iterable[FieldTerm]:
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        if not isinstance(expr, dict):
            problems.append(f"{p}: must be an object")
            continue
        op = expr.get("operator")
        values = expr.get("values") or []
        if op not in ("In", "NotIn"):
            problems.append(
                f'{p}.operator: Unsupported value: "{op}": '
                f"supported values: {_SUPPORTED_FIELD_OPERATORS}"
            )
            continue
        if not isinstance(values, list) or len(values) != 1:
            problems.append(f"{p}.values: Invalid value: {values!r}: must have one element")
            continue
        yield FieldTerm(str(expr.get("key", "")), str(values[0]), op == "In")
