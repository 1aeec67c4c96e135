"""Compiling one schema node's `x-kubernetes-validations` (apiextensions-apiserver
schema/cel/compilation.go): each rule in the node's environment (`env.environment`), the
result type, `oldSelf` use (a transition rule), the optional `messageExpression` (a string),
the normalized `fieldPath`, and the estimated cost.

cel-expr-python declares object-typed nodes as `map(string, dyn)`, so the names a rule selects
from `self`/`oldSelf` (and from comprehension variables over them) are checked against the
schema here, reported as cel-go reports them (`undefined field 'x'`). The cost estimate is
cel-go's in spirit: one unit per token, comprehensions multiplied by the receiver's maximum
size and string scans by its maximum length (maxItems, maxProperties, maxLength, else the
sizes a 3 MiB request can hold), the rule's cost multiplied by the node's cardinality. The
same `cost.CostPlan` gives the runtime cost with the sizes of the evaluated value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel

from draplane.apiserver.crdcel.cost import CostPlan, SizePlan, cost_plan, size_plan
from draplane.apiserver.crdcel.env import environment, escape, is_dyn, type_key
from draplane.dra.cel.compile import STRING_SCANS

STATIC_COST_LIMIT = 10_000_000
"""StaticEstimatedCostLimit: the estimated cost of one rule (times its cardinality)."""
STATIC_CRD_COST_LIMIT = 100_000_000
"""StaticEstimatedCRDCostLimit: the estimated costs of all of a schema's rules."""
MAX_REQUEST_BYTES = 3 * 1024 * 1024
REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")

_TOKEN = re.compile(
    r"""(?P<s>[rRbB]*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'))|(?P<n>\d+(?:\.\d+)?)"""
    r"""|(?P<i>[A-Za-z_][A-Za-z0-9_]*)|(?P<o>\S)"""
)
_COMPREHENSIONS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_SCANS = STRING_SCANS | {"quantity", "url"}
"""Calls whose cost grows with a string's length (the DRA estimator's, plus the CRD libraries')."""


_META: dict[str, Any] = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
    },
}
"""What a resource's root (and an embedded resource) has besides its properties."""


@dataclass
class Compiled:
    """One compiled rule; `error` when it did not compile (`program` None)."""

    rule: dict[str, Any]
    program: Any = None
    message_program: Any = None
    error: str | None = None
    message_error: str | None = None
    uses_old_self: bool = False
    cost: int = 0
    message_cost: int = 0
    field_path: str = ""
    plan: CostPlan = field(default_factory=CostPlan)
    message_plan: CostPlan = field(default_factory=CostPlan)

    @property
    def text(self) -> str:
        return str(self.rule.get("rule") or "")


@dataclass
class _Tok:
    kind: str
    text: str
    pos: int


def _tokens(expression: str) -> list[_Tok]:
    return [_Tok(str(m.lastgroup), m.group(), m.start()) for m in _TOKEN.finditer(expression)]


def _caret(expression: str, pos: int, message: str) -> str:
    line = expression.count("\n", 0, pos) + 1
    start = expression.rfind("\n", 0, pos) + 1
    end = expression.find("\n", pos)
    text = expression[start : end if end >= 0 else len(expression)]
    col = pos - start
    return f"ERROR: <input>:{line}:{col + 1}: {message}\n | {text}\n | {'.' * col}^"


def _clean(text: str) -> str:
    text = re.sub(r"^[A-Z_]+: ", "", text.strip())
    return re.sub(r"\s*\[[A-Z_]+\]$", "", text)


def _child(schema: Any, name: str) -> tuple[Any, bool]:
    """The schema `.name` selects on `schema` and whether the name is defined there."""
    if not isinstance(schema, dict) or is_dyn(schema):
        return None, True
    if schema.get("type") != "object":
        return None, True
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    if not props and isinstance(additional, dict):
        return additional, True
    if schema.get("x-kubernetes-embedded-resource") and name in _META:
        return _META[name], True
    for key, sub in props.items():
        if escape(key) == name:
            return sub, True
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return None, True
    return None, False


def _element(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return None
    if schema.get("type") == "array":
        return schema.get("items")
    if schema.get("type") == "object":
        return {"type": "string"}  # a comprehension over a map or object binds its keys
    return None


def _min_size(schema: Any) -> int:
    t = schema.get("type") if isinstance(schema, dict) else None
    return 1 if t in ("integer", "number", "boolean") or t is None else 2


def max_elements(schema: Any) -> int:
    """The most elements (items, properties, characters) a value of `schema` can have."""
    if not isinstance(schema, dict):
        return 1
    t = schema.get("type")
    if t == "array":
        bound = schema.get("maxItems")
        default = (MAX_REQUEST_BYTES - 2) // (_min_size(schema.get("items")) + 1)
    elif t == "object":
        bound = schema.get("maxProperties")
        default = (MAX_REQUEST_BYTES - 2) // (_min_size(schema.get("additionalProperties")) + 4)
    elif t == "string":
        bound = schema.get("maxLength")
        default = MAX_REQUEST_BYTES - 2
    else:
        return 1
    return int(bound) if isinstance(bound, int) and not isinstance(bound, bool) else default


def _scan(toks: list[_Tok], node: Any, root: bool) -> tuple[dict[int, Any], tuple[int, str] | None]:
    """Receiver schemas of member calls (by the index of the call's name token), and the
    position and message of the first undefined field."""
    receivers: dict[int, Any] = {}
    bound: dict[str, Any] = {"self": node, "oldSelf": node}
    for i, tok in enumerate(toks):
        if tok.kind != "i" or tok.text not in bound:
            continue
        if i and toks[i - 1].text == ".":
            continue
        schema, j, at_root = bound[tok.text], i + 1, root and tok.text in ("self", "oldSelf")
        while j + 1 < len(toks) and toks[j].text == "." and toks[j + 1].kind == "i":
            name = toks[j + 1].text
            if j + 2 < len(toks) and toks[j + 2].text == "(":
                receivers[j + 1] = schema
                if name in _COMPREHENSIONS and j + 3 < len(toks) and toks[j + 3].kind == "i":
                    bound[toks[j + 3].text] = _element(schema)
                break
            if at_root and name in _META:
                schema = _META[name]
            else:
                schema, ok = _child(schema, name)
                if not ok:
                    return receivers, (toks[j].pos, f"undefined field '{name}'")
            at_root = False
            j += 2
    return receivers, None


def _chain_type(toks: list[_Tok], node: Any, root: bool) -> str:
    """The CEL type of an expression that is only a selection (`self.spec.name`), as the
    schema declares it: `dyn` for anything else (object fields are dyn to the checker)."""
    if not toks or toks[0].text not in ("self", "oldSelf") or len(toks) % 2 == 0:
        return "dyn"
    schema = node
    for i in range(1, len(toks), 2):
        if toks[i].text != "." or toks[i + 1].kind != "i":
            return "dyn"
        name = toks[i + 1].text
        if root and i == 1 and name in ("apiVersion", "kind", "metadata"):
            return "string" if name != "metadata" else "map(string,dyn)"
        schema, _ = _child(schema, name)
    return type_key(schema) if len(toks) > 1 else "dyn"


def _plan(toks: list[_Tok], receivers: dict[int, Any]) -> CostPlan:
    """The cost of the tokens (see the module docstring)."""
    return cost_plan(toks, receivers, _COMPREHENSIONS, _SCANS)


def _compile(env: cel.Env, expression: str) -> tuple[Any, str | None]:
    try:
        return env.compile(expression), None
    except RuntimeError as e:
        return None, _clean(str(e))


def compile_rule(node: dict[str, Any], rule: dict[str, Any], *, root: bool) -> Compiled:
    """Compiles `rule` for the schema `node` (`root`: the resource's root schema)."""
    out = Compiled(rule)
    text = str(rule.get("rule") or "")
    if not text.strip():
        return out
    env = environment(type_key(node))
    toks = _tokens(text)
    out.uses_old_self = any(
        t.kind == "i" and t.text == "oldSelf" and (not i or toks[i - 1].text != ".")
        for i, t in enumerate(toks)
    )
    program, error = _compile(env, text)
    receivers, undefined = _scan(toks, node, root)
    if error is None and undefined is not None:
        error = _caret(text, *undefined)
    if error is not None:
        out.error = "compilation failed: " + error
    elif program.return_type() not in (cel.Type.BOOL, cel.Type.DYN) or _chain_type(
        toks, node, root
    ) not in ("bool", "dyn"):
        out.error = "cel expression must evaluate to a bool"
    else:
        out.program = program
    out.plan = _plan(toks, receivers)
    out.cost = out.plan.cost(max_elements)
    message = str(rule.get("messageExpression") or "")
    if message.strip():
        mtoks = _tokens(message)
        mprogram, merror = _compile(env, message)
        mreceivers, mundefined = _scan(mtoks, node, root)
        if merror is None and mundefined is not None:
            merror = _caret(message, *mundefined)
        if merror is not None:
            out.message_error = "messageExpression compilation failed: " + merror
        elif mprogram.return_type() not in (cel.Type.STRING, cel.Type.DYN) or _chain_type(
            mtoks, node, root
        ) not in ("string", "dyn"):
            out.message_error = "must evaluate to a string"
        else:
            out.message_program = mprogram
        out.message_plan = _plan(mtoks, mreceivers)
        out.message_cost = out.message_plan.cost(max_elements)
    return out


@dataclass
class Node:
    """The compiled rules of one schema node and of the nodes below it that have any."""

    schema: dict[str, Any]
    rules: list[Compiled] = field(default_factory=list)
    properties: dict[str, Node] = field(default_factory=dict)
    additional: Node | None = None
    items: Node | None = None
    sizes: SizePlan | None = None
    """What the runtime cost of the node's rules measures in the value (None: nothing)."""


def compile_schema(schema: Any, *, root: bool = True) -> Node | None:
    """The rule tree of a version's schema (None: no rules anywhere)."""
    if not isinstance(schema, dict):
        return None
    node = Node(schema)
    for rule in schema.get("x-kubernetes-validations") or []:
        if isinstance(rule, dict):
            compiled = compile_rule(schema, rule, root=root)
            compiled.field_path = normalized_field_path(schema, rule) or ""
            node.rules.append(compiled)
    node.sizes = size_plan(schema, [p for c in node.rules for p in (c.plan, c.message_plan)])
    for key, sub in (schema.get("properties") or {}).items():
        if root and key == "metadata":
            continue
        child = compile_schema(sub, root=False)
        if child is not None:
            node.properties[key] = child
    node.additional = compile_schema(schema.get("additionalProperties"), root=False)
    node.items = compile_schema(schema.get("items"), root=False)
    if node.rules or node.properties or node.additional or node.items:
        return node
    return None


_PATH_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|[.\[\]]|[^.\[\]']+")


def normalized_field_path(schema: Any, rule: dict[str, Any]) -> str | None:
    """ValidFieldPath: `fieldPath` as a field path relative to the node ("" when unset),
    None when it names no field of the schema."""
    text = str(rule.get("fieldPath") or "")
    if not text:
        return ""
    parts: list[str] = []
    toks = _PATH_TOKEN.findall(text)
    i = 0
    while i < len(toks):
        tok = toks[i]
        if tok == "." and i + 1 < len(toks) and toks[i + 1] not in ".[]":
            name, i = toks[i + 1], i + 2
            named = True
        elif tok == "[" and i + 2 < len(toks) and toks[i + 2] == "]":
            quoted = toks[i + 1]
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                return None
            name, i = re.sub(r"\\(.)", r"\1", quoted[1:-1]), i + 3
            named = not (
                isinstance(schema, dict)
                and not schema.get("properties")
                and isinstance(schema.get("additionalProperties"), dict)
            )
        else:
            return None
        if not isinstance(schema, dict):
            return None
        if named:
            props = schema.get("properties") or {}
            if name not in props:
                return None
            schema = props[name]
            parts.append(("." if parts else "") + name)
        else:
            schema = schema.get("additionalProperties")
            parts.append(f"[{name}]")
    return "".join(parts)
