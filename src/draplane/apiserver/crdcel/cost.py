"""The cost of CRD validation rules: one model for the estimate when a CRD is written and the
runtime cost when a custom resource is (apiextensions-apiserver schema/cel, k8s.io/apiserver
pkg/apis/apiextensions/v1 celconfig).

A rule's cost is a `CostPlan`: its tokens (1 each), plus per string scan the length of the
string it reads, plus per comprehension 1 + the size of what it ranges over times the cost of
its body. The estimate takes the sizes the schema allows (`rules.max_elements`); the runtime
cost takes the sizes the evaluated value has (`Sizes`: the largest value at each schema node,
and for a receiver the schema does not locate, the largest of anything in the value). That is
an upper bound of the work the evaluation does, known before it runs: cel-expr-python tracks no
cost, so a rule over `PerCallLimit`, or over what is left of the object's
`RuntimeCELCostBudget`, is not evaluated at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PER_CALL_LIMIT = 1_000_000
"""celconfig.PerCallLimit: the runtime cost of one evaluation of one expression."""
RUNTIME_COST_BUDGET = 10_000_000
"""celconfig.RuntimeCELCostBudget: the runtime cost of all the rules of one object."""
ERR_COST_LIMIT = "operation cancelled: actual cost limit exceeded"
ITERATION_BUDGET = "Iteration budget exceeded"
"""cel-expr-python's error when one evaluation runs more than 10,000 comprehension iterations."""
OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)
MESSAGE_OUT_OF_BUDGET = (
    "messageExpression evaluation failed due to running out of cost budget, no further "
    "validation rules will be run"
)


def call_limit_message(rule_error_string: str) -> str:
    return (
        f"'{ERR_COST_LIMIT}': no further validation rules will be run due to call cost exceeds "
        f"limit for rule: {rule_error_string}"
    )


def message_call_limit_message(expression: str) -> str:
    quoted = json.dumps(expression, ensure_ascii=False)  # Go's %q for printable text
    return (
        "no further validation rules will be run due to call cost exceeds limit for "
        f"messageExpression: {quoted}"
    )


@dataclass(frozen=True)
class CostPlan:
    """The cost of one expression as a function of the sizes of its receivers (schemas)."""

    fixed: int = 0
    scans: tuple[Any, ...] = ()
    loops: tuple[tuple[Any, CostPlan], ...] = ()

    def cost(self, size: Callable[[Any], int]) -> int:
        total = self.fixed + sum(size(s) for s in self.scans)
        for receiver, body in self.loops:
            total += 1 + size(receiver) * body.cost(size)
        return total


def cost_plan(
    toks: Sequence[Any],
    receivers: Mapping[int, Any],
    comprehensions: frozenset[str],
    scans: frozenset[str],
) -> CostPlan:
    """The plan of tokens (each with `kind` and `text`); `receivers` maps the index of a member
    call's name token to the schema of its receiver."""
    match: dict[int, int] = {}
    stack: list[int] = []
    for i, tok in enumerate(toks):
        if tok.text == "(":
            stack.append(i)
        elif tok.text == ")" and stack:
            match[stack.pop()] = i

    def plan(start: int, end: int) -> CostPlan:
        fixed, scanned, loops, i = 0, [], [], start
        while i < end:
            tok = toks[i]
            if tok.kind == "i" and i + 1 < end and toks[i + 1].text == "(" and i in receivers:
                close = match.get(i + 1, end)
                if tok.text in comprehensions:
                    loops.append((receivers[i], plan(i + 2, close)))
                    i = close + 1
                    continue
                if tok.text in scans:
                    scanned.append(receivers[i])
            fixed += 1
            i += 1
        return CostPlan(fixed, tuple(scanned), tuple(loops))

    return plan(0, len(toks))


def _receivers(plan: CostPlan) -> list[Any]:
    out = list(plan.scans)
    for receiver, body in plan.loops:
        out.append(receiver)
        out += _receivers(body)
    return out


@dataclass(frozen=True)
class SizePlan:
    """What `Sizes` measures for the plans of one schema node: the schemas (by identity) at
    and below the node (`known`), those on the way to a receiver (`relevant`), and whether a
    receiver is beyond the schema, so the largest of everything is needed (`needs_any`)."""

    known: frozenset[int]
    relevant: frozenset[int]
    needs_any: bool


def size_plan(schema: Any, plans: Sequence[CostPlan]) -> SizePlan | None:
    """None when no plan depends on a size."""
    receivers = [r for p in plans for r in _receivers(p)]
    if not receivers:
        return None
    known: set[int] = set()
    relevant: set[int] = set()
    wanted = {id(r) for r in receivers}

    def visit(node: Any) -> bool:
        if not isinstance(node, dict) or id(node) in known:
            return id(node) in relevant
        known.add(id(node))
        below = [visit(sub) for sub in (node.get("properties") or {}).values()]
        below += [visit(node.get(key)) for key in ("items", "additionalProperties")]
        if id(node) in wanted or any(below):
            relevant.add(id(node))
            return True
        return False

    visit(schema)
    return SizePlan(frozenset(known), frozenset(relevant), not wanted <= known)


class Sizes:
    """The sizes of the values one rule evaluation sees: per schema node below the rule's node
    the largest value there (0 when there is none), else the largest of all."""

    def __init__(self, plan: SizePlan, schema: Any, *values: Any) -> None:
        self._plan = plan
        self._by_schema: dict[int, int] = {}
        self._any = 0
        for value in values:
            self._measure(schema, value)

    def __call__(self, schema: Any) -> int:
        if id(schema) in self._plan.known:
            return self._by_schema.get(id(schema), 0)
        return self._any

    def _measure(self, schema: Any, value: Any) -> None:
        if not isinstance(value, _SIZED):
            return
        n = len(value)
        if n > self._any:
            self._any = n
        if schema is not None and n > self._by_schema.get(id(schema), 0):
            self._by_schema[id(schema)] = n
        if isinstance(value, _STRINGS):
            return
        relevant, everything = self._plan.relevant, self._plan.needs_any
        if isinstance(value, dict):
            props = (schema.get("properties") or {}) if schema is not None else {}
            additional = schema.get("additionalProperties") if schema is not None else None
            for key, item in value.items():
                sub = props.get(key, additional)
                if not isinstance(sub, dict):
                    sub = None
                if everything:
                    if len(key) > self._any:
                        self._any = len(key)
                    self._measure(sub, item)
                elif sub is not None and id(sub) in relevant:
                    self._measure(sub, item)
        else:
            items = schema.get("items") if schema is not None else None
            if not isinstance(items, dict):
                items = None
            if everything or (items is not None and id(items) in relevant):
                for item in value:
                    self._measure(items, item)


_SIZED = (str, bytes, list, dict)
_STRINGS = (str, bytes)


class Budget:
    """What is left of RuntimeCELCostBudget for one object; negative once validation stopped."""

    __slots__ = ("remaining",)

    def __init__(self, remaining: int = RUNTIME_COST_BUDGET) -> None:
        self.remaining = remaining

    def charge(self, cost: int) -> str | None:
        """Charges one evaluation of `cost`: None, or why validation stops ("budget" when the
        budget is exhausted, "limit" when the call is over PerCallLimit)."""
        charged = min(cost, PER_CALL_LIMIT + 1)  # cel-go stops the call just past the limit
        if charged > self.remaining:
            self.remaining = -1
            return "budget"
        if cost > PER_CALL_LIMIT:
            self.remaining = -1
            return "limit"
        self.remaining -= charged
        return None
