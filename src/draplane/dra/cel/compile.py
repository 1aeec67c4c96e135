"""Compiling and evaluating device selectors (k8s.io/dynamic-resource-allocation/cel).

`compile_expression(text)` returns a `CompilationResult` (program or error, estimated cost);
`CompilationResult.device_matches(device)` evaluates it against a `DeviceInput` and returns a bool
or raises `CELRuntimeError`. A runtime error is never a non-match: the allocator turns it into a
fatal error for the claim ("CEL runtime error: ..."), as upstream does.

The runtime cost limit (upstream's `cel.CostLimit(CELSelectorExpressionMaxCost)`): cel-expr-python
tracks no cost, so the estimator's cost is taken again with the device's own sizes (its largest
map, its longest string) instead of the declared maxima; above the limit the selector is not
evaluated and fails with "operation cancelled: actual cost limit exceeded". cel-expr-python
itself stops an evaluation after 10,000 comprehension iterations (not configurable); that is
reported as the same cost-limit error.

The `device` variable: `driver` (string), `attributes` and `capacity` (map domain -> map id ->
value), `allowMultipleAllocations` (bool). Unqualified names belong to the driver's domain; an
unknown domain reads as an empty map; a missing id is a runtime error "no such key: <id>".
An expression compiles only if it also type-checks against those field types (`typecheck.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from draplane.api.quantity import parse_quantity
from draplane.dra.cel.library import (
    CELFunctionError,
    kubernetes_functions,
    quantity_value,
    semver_value,
)
from draplane.dra.cel.typecheck import DeviceTypeChecker

# resource.k8s.io/v1 CELSelectorExpressionMaxCost and CELSelectorExpressionMaxLength.
SELECTOR_MAX_COST = 1_000_000
SELECTOR_MAX_LENGTH = 10 * 1024
# Sizes the cost estimator assumes (ResourceSliceMaxAttributesAndCapacitiesPerDevice,
# DeviceAttributeMaxValueLength), as upstream declares them on the device type.
_MAX_ELEMENTS = 32
_MAX_STRING = 64
ERR_COST_LIMIT = "operation cancelled: actual cost limit exceeded"
ITERATION_BUDGET = "Iteration budget exceeded"
"""cel-expr-python's error when one evaluation runs more than 10,000 comprehension iterations."""

_DOMAIN_REF = re.compile(
    r"""device\s*\.\s*(?:attributes|capacity)\s*\[\s*(["'])([^"'\\]*)\1\s*\]"""
)
_TOKEN = re.compile(r"""\d+\.?\d*|\w+|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\S""")
_COMPREHENSIONS = frozenset(
    {"all", "exists", "exists_one", "map", "filter", "sortBy", "transformList", "transformMap"}
)
STRING_SCANS: frozenset[str] = frozenset(
    {
        "matches",
        "find",
        "findAll",
        "split",
        "replace",
        "contains",
        "startsWith",
        "endsWith",
        "indexOf",
        "lastIndexOf",
        "lowerAscii",
        "upperAscii",
        "trim",
        "join",
        "format",
        "reverse",
        "substring",
        "charAt",
    }
)


class CELRuntimeError(Exception):
    """Evaluation failed: a missing key, a bad conversion, the cost limit."""


class DeviceInput:
    """A device as its selectors see it, converted once and reused for every expression.

    `data` is the `device` variable; `error` is set when an attribute cannot be represented
    (then every selector evaluation on this device fails with it, like upstream's conversion).
    """

    __slots__ = ("_sizes", "data", "error")

    def __init__(self, driver: str, device: Mapping[str, Any], *, allow_multiple: bool) -> None:
        self.error: str | None = None
        attributes: dict[str, dict[str, Any]] = {}
        for name, attr in (device.get("attributes") or {}).items():
            domain, ident = split_qualified_name(name, driver)
            try:
                value = attribute_value(attr)
            except CELFunctionError as e:
                self.error = f"attribute {name}: {e}"
                continue
            attributes.setdefault(domain, {})[ident] = value
        capacity: dict[str, dict[str, Any]] = {}
        for name, cap in (device.get("capacity") or {}).items():
            domain, ident = split_qualified_name(name, driver)
            try:
                capacity.setdefault(domain, {})[ident] = quantity_value(
                    parse_quantity(str((cap or {}).get("value", "0")))
                )
            except ValueError as e:
                self.error = f"capacity {name}: {e}"
        self.data: dict[str, Any] = {
            "driver": driver,
            "attributes": attributes,
            "capacity": capacity,
            "allowMultipleAllocations": allow_multiple,
        }
        self._sizes: tuple[int, int] | None = None

    def sizes(self) -> tuple[int, int]:
        """The sizes the runtime cost is taken with (computed on first use): the largest map a
        comprehension can range over, the longest string a scan can read (values, names,
        domains, the driver)."""
        if self._sizes is None:
            attributes, capacity = self.data["attributes"], self.data["capacity"]
            maps = [attributes, capacity, *attributes.values(), *capacity.values()]
            strings = [len(self.data["driver"]), *(len(k) for m in maps for k in m)]
            strings += [
                len(v) for m in attributes.values() for v in m.values() if isinstance(v, str)
            ]
            self._sizes = (max(len(m) for m in maps), max(strings))
        return self._sizes


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


def attribute_value(attr: Mapping[str, Any]) -> Any:
    """The CEL value of one DeviceAttribute (exactly one of int, bool, string, version)."""
    if "int" in attr:
        return int(attr["int"])
    if "bool" in attr:
        return bool(attr["bool"])
    if "string" in attr:
        return str(attr["string"])
    if "version" in attr:
        try:
            return semver_value(str(attr["version"]))
        except CELFunctionError as e:
            raise CELFunctionError(f"parse semantic version: {e}") from None
    raise CELFunctionError("unsupported attribute value")


@dataclass
class CompilationResult:
    """One compiled selector; `error` is set instead of `program` when compilation failed."""

    expression: str
    program: Any = None
    error: str | None = None
    max_cost: int = 0
    cost_limit: int = SELECTOR_MAX_COST
    # Domains named literally (device.attributes["d"]): filled in as empty maps when missing.
    domains: tuple[str, ...] = field(default=())
    evaluations: int = 0
    # Per comprehension depth: (tokens, string scans), see `cost_terms`.
    terms: tuple[tuple[int, int], ...] = field(default=())

    def runtime_cost(self, device: DeviceInput) -> int:
        """The cost of evaluating this selector on `device` (the estimate at its sizes)."""
        if len(self.terms) == 1 and not self.terms[0][1]:
            return self.terms[0][0]  # no comprehension, no string scan: no size matters
        return terms_cost(self.terms, *device.sizes())

    def device_matches(self, device: DeviceInput) -> bool:
        if self.error is not None:
            raise CELRuntimeError(self.error)
        if device.error is not None:
            raise CELRuntimeError(device.error)
        if self.runtime_cost(device) > self.cost_limit:
            raise CELRuntimeError(ERR_COST_LIMIT)
        self.evaluations += 1
        data = device.data
        attrs, caps = data["attributes"], data["capacity"]
        for d in self.domains:
            if d not in attrs or d not in caps:
                data = dict(data)
                data["attributes"] = {d: {} for d in self.domains} | attrs
                data["capacity"] = {d: {} for d in self.domains} | caps
                break
        try:
            value = self.program.eval(data={"device": data})
        except RuntimeError as e:  # the evaluator's own bound on comprehension iterations
            if ITERATION_BUDGET in str(e):
                raise CELRuntimeError(ERR_COST_LIMIT) from None
            raise CELRuntimeError(_runtime_message(str(e))) from None
        if value.type() == cel.Type.ERROR:
            raise CELRuntimeError(_runtime_message(str(value.value())))
        result = value.value()
        if not isinstance(result, bool):
            raise CELRuntimeError(
                f"CEL result of type {value.type().name().lower()} could not be converted to bool"
            )
        return result


_KEY_NOT_FOUND = re.compile(r'Key not found in map : "?([^"]*)"?')


def _runtime_message(text: str) -> str:
    text = re.sub(r"^[A-Z_]+: ", "", text.strip())
    m = _KEY_NOT_FOUND.search(text)
    if m:
        return f"no such key: {m.group(1)}"
    if "No matching overloads" in text:
        return "no such overload"
    return text


def _compile_message(text: str) -> str:
    text = re.sub(r"^[A-Z_]+: ", "", text.strip())
    return re.sub(r"\s*\[[A-Z_]+\]$", "", text)


def cost_terms(expression: str) -> tuple[tuple[int, int], ...]:
    """The cost of `expression` as a polynomial in the sizes, in the spirit of cel-go's
    estimator: per comprehension nesting depth d, the count of tokens and of string scans there.

    Each token costs 1; a string scan costs the string's length; a comprehension body runs once
    per element of the map it ranges over, nested comprehensions multiply.
    """
    terms: list[list[int]] = [[0, 0]]
    depth_stack: list[int] = []  # paren depth at which each comprehension started
    depth = 0
    tokens = _TOKEN.findall(expression)
    for i, tok in enumerate(tokens):
        if tok == "(":
            depth += 1
            prev = tokens[i - 1] if i else ""
            if prev in _COMPREHENSIONS and i >= 2 and tokens[i - 2] == ".":
                depth_stack.append(depth)
                if len(terms) <= len(depth_stack):
                    terms.append([0, 0])
        elif tok == ")":
            if depth_stack and depth_stack[-1] == depth:
                depth_stack.pop()
            depth -= 1
        terms[len(depth_stack)][1 if tok in STRING_SCANS else 0] += 1
    return tuple((plain, scans) for plain, scans in terms)


def terms_cost(terms: tuple[tuple[int, int], ...], elements: int, string_length: int) -> int:
    """The cost `cost_terms` describes for maps of `elements` and strings of `string_length`."""
    return sum(
        (plain + scans * string_length) * elements**d for d, (plain, scans) in enumerate(terms)
    )


def estimate_cost(expression: str) -> int:
    """Worst-case cost in CEL cost units: `cost_terms` at the sizes a device can have (maps of
    32 entries, strings of 64 characters)."""
    return terms_cost(cost_terms(expression), _MAX_ELEMENTS, _MAX_STRING)


class Compiler:
    """The device-selector environment; compiled programs cached by expression text.

    Failures are not cached (upstream's cache keeps only successes). Thread-compatible: the
    scheduler calls it from one event loop.
    """

    def __init__(self, *, cost_limit: int = SELECTOR_MAX_COST, max_cached: int = 10_000) -> None:
        self.cost_limit = cost_limit
        self.max_cached = max_cached
        self._cache: dict[str, CompilationResult] = {}
        self.compilations = 0
        self._env = cel.NewEnv(
            variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
            extensions=[
                ext_strings.ExtStrings(),
                ext_bindings.ExtBindings(),
                ext_optional.ExtOptional(),
                cel.CelExtension("kubernetes", kubernetes_functions()),
            ],
        )
        self._checker = DeviceTypeChecker()

    def get_or_compile(self, expression: str) -> CompilationResult:
        hit = self._cache.get(expression)
        if hit is not None:
            return hit
        result = self.compile(expression)
        if result.error is None:
            if len(self._cache) >= self.max_cached:
                self._cache.pop(next(iter(self._cache)))
            self._cache[expression] = result
        return result

    def compile(self, expression: str) -> CompilationResult:
        self.compilations += 1
        if len(expression) > SELECTOR_MAX_LENGTH:
            return CompilationResult(
                expression,
                error=f"compilation failed: expression too long ({len(expression)} > "
                f"{SELECTOR_MAX_LENGTH} bytes)",
            )
        try:
            program = self._env.compile(expression)
        except RuntimeError as e:
            return CompilationResult(
                expression, error="compilation failed: " + _compile_message(str(e))
            )
        type_error, out = self._checker.check(expression)
        if type_error is not None:
            return CompilationResult(expression, error="compilation failed: " + type_error)
        if out not in ("bool", "dyn"):
            return CompilationResult(
                expression, error=f"must evaluate to bool or the unknown type, not {out}"
            )
        domains = tuple(dict.fromkeys(m.group(2) for m in _DOMAIN_REF.finditer(expression)))
        terms = cost_terms(expression)
        return CompilationResult(
            expression,
            program=program,
            max_cost=terms_cost(terms, _MAX_ELEMENTS, _MAX_STRING),
            terms=terms,
            cost_limit=self.cost_limit,
            domains=domains,
        )

    def validate(self, expression: str) -> str | None:
        """The validation error for a selector being stored (compile error or cost), or None."""
        result = self.compile(expression)
        if result.error is not None:
            return result.error
        if result.max_cost > SELECTOR_MAX_COST:
            return (
                "cost exceeds budget by factor of more than 100x"
                if result.max_cost > 100 * SELECTOR_MAX_COST
                else "too complex, exceeds cost limit"
            )
        return None
