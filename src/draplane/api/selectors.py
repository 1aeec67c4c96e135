"""Label and field selectors: apimachinery's grammar (`pkg/labels`, `pkg/fields`) and matching.
Field selectors live in `fieldselector` and are re-exported here.

`LabelSelector.parse("env in (a,b),!canary")`, `FieldSelector.parse("spec.nodeName=n", fields)`.
Bad syntax raises a 400 BadRequest StatusError carrying apimachinery's message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from draplane.api import errors, names
from draplane.api.fieldselector import FieldRequirement, FieldSelector, selectable
from draplane.api.meta import Obj

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "new_requirement",
    "requirement_problems",
    "selectable",
]

IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "in", "notin", "=", "==", "!="
EXISTS, DOES_NOT_EXIST, GREATER_THAN, LESS_THAN = "exists", "!", "gt", "lt"
_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, decimal digits, in range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True)
class Requirement:
    """One `key op values` term; `values` keeps the parsed order (a set for in/notin)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels:
            return False
        have = _parse_int64(labels[self.key])
        want = _parse_int64(self.values[0]) if len(self.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if op == GREATER_THAN else have < want


def new_requirement(key: str, operator: str, values: list[str], *, path: str = "") -> Requirement:
    """labels.NewRequirement: validates the key, the operator's arity and every value."""
    problems = requirement_problems(key, operator, values, path=path)
    if problems:
        raise errors.bad_request(_aggregate(problems))
    return Requirement(key, operator, tuple(values))


def _aggregate(problems: list[str]) -> str:
    return problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"


_ARITY: dict[str, tuple[Callable[[int], bool], str]] = {
    IN: (lambda n: n > 0, "for 'in', 'notin' operators, values set can't be empty"),
    NOT_IN: (lambda n: n > 0, "for 'in', 'notin' operators, values set can't be empty"),
    EQUALS: (lambda n: n == 1, "exact-match compatibility requires one single value"),
    DOUBLE_EQUALS: (lambda n: n == 1, "exact-match compatibility requires one single value"),
    NOT_EQUALS: (lambda n: n == 1, "exact-match compatibility requires one single value"),
    EXISTS: (lambda n: n == 0, "values set must be empty for exists and does not exist"),
    DOES_NOT_EXIST: (lambda n: n == 0, "values set must be empty for exists and does not exist"),
    GREATER_THAN: (lambda n: n == 1, "for 'Gt', 'Lt' operators, exactly one value is required"),
    LESS_THAN: (lambda n: n == 1, "for 'Gt', 'Lt' operators, exactly one value is required"),
}


def requirement_problems(
    key: str, operator: str, values: list[str], *, path: str = ""
) -> list[str]:
    """The messages labels.NewRequirement would aggregate (empty when valid)."""
    prefix = path + "." if path else ""
    problems: list[str] = []
    key_errs = names.is_qualified_name(key)
    if key_errs:
        problems.append(_invalid(prefix + "key", key, "; ".join(key_errs)))
    values_path = prefix + "values"
    arity = _ARITY.get(operator)
    if arity is None:
        problems.append(
            f'{prefix}operator: Unsupported value: "{operator}": supported values: '
            + ", ".join(f'"{o}"' for o in (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST))
        )
    elif not arity[0](len(values)):
        problems.append(_invalid(values_path, values, arity[1]))
    if operator in (GREATER_THAN, LESS_THAN):
        for i, v in enumerate(values):
            if _parse_int64(v) is None:
                problems.append(
                    _invalid(
                        f"{values_path}[{i}]",
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(values):
        value_errs = names.is_valid_label_value(v)
        if value_errs:
            problems.append(_invalid(f"{values_path}[{i}][{key}]", v, "; ".join(value_errs)))
    return problems


def _invalid(path: str, value: Any, detail: str) -> str:
    if isinstance(value, list):
        shown = "[]string{" + ", ".join(f'"{v}"' for v in value) + "}"
    else:
        shown = f'"{value}"'
    return f"{path}: Invalid value: {shown}: {detail}"


class LabelSelector:
    """A conjunction of label requirements; `nothing()` matches no object at all."""

    __slots__ = ("_nothing", "requirements")

    def __init__(self, requirements: tuple[Requirement, ...] = (), *, nothing: bool = False):
        self.requirements = requirements
        self._nothing = nothing

    @classmethod
    def everything(cls) -> LabelSelector:
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        return cls(nothing=True)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        return cls(tuple(_LabelParser(text).parse()))

    @classmethod
    def from_set(cls, labels: Mapping[str, str]) -> LabelSelector:
        """Equality requirements for every pair, as labels.SelectorFromSet."""
        return cls(tuple(Requirement(k, EQUALS, (v,)) for k, v in sorted(labels.items())))

    @classmethod
    def from_label_selector(cls, sel: Obj | None) -> LabelSelector:
        """metav1.LabelSelectorAsSelector: None matches nothing, {} matches everything."""
        if sel is None:
            return cls.nothing()
        if not isinstance(sel, dict):
            raise errors.bad_request("invalid label selector: must be an object")
        match_labels = sel.get("matchLabels") or {}
        expressions = sel.get("matchExpressions") or []
        if not isinstance(match_labels, dict) or not isinstance(expressions, list):
            raise errors.bad_request(
                "invalid label selector: malformed matchLabels/matchExpressions"
            )
        reqs = [new_requirement(str(k), EQUALS, [str(v)]) for k, v in match_labels.items()]
        ops = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
        for expr in expressions:
            if not isinstance(expr, dict):
                raise errors.bad_request("invalid label selector: malformed matchExpressions")
            op = ops.get(expr.get("operator"))  # type: ignore[arg-type]
            if op is None:
                raise errors.bad_request(
                    f'"{expr.get("operator")}" is not a valid label selector operator'
                )
            vals = expr.get("values") or []
            reqs.append(new_requirement(str(expr.get("key", "")), op, [str(v) for v in vals]))
        return cls(tuple(reqs))

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self._nothing and not self.requirements

    def __str__(self) -> str:
        return ",".join(_requirement_text(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"LabelSelector({str(self)!r})" if not self._nothing else "LabelSelector(<nothing>)"


def _requirement_text(r: Requirement) -> str:
    if r.operator == EXISTS:
        return r.key
    if r.operator == DOES_NOT_EXIST:
        return "!" + r.key
    if r.operator in (IN, NOT_IN):
        return f"{r.key} {r.operator} ({','.join(r.values)})"
    if r.operator == GREATER_THAN:
        return f"{r.key}>{r.values[0]}"
    if r.operator == LESS_THAN:
        return f"{r.key}<{r.values[0]}"
    return f"{r.key}{r.operator}{r.values[0]}"


# Tokens of the label selector lexer (apimachinery pkg/labels/selector.go).
_IDENT, _END, _COMMA, _OPEN, _CLOSE = "ident", "end", ",", "(", ")"
_SPECIAL = frozenset("!=<>(),")
_SYMBOLS = {
    "!": DOES_NOT_EXIST,
    "!=": NOT_EQUALS,
    "=": EQUALS,
    "==": DOUBLE_EQUALS,
    ">": GREATER_THAN,
    "<": LESS_THAN,
    "(": _OPEN,
    ")": _CLOSE,
    ",": _COMMA,
}
_KEYWORDS = {"in": IN, "notin": NOT_IN}


def _lex(text: str) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in _SPECIAL:
            sym = text[i : i + 2] if text[i : i + 2] in _SYMBOLS else ch
            items.append((_SYMBOLS[sym], sym))
            i += len(sym)
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
                j += 1
            word = text[i:j]
            items.append((_KEYWORDS.get(word, _IDENT), word))
            i = j
    items.append((_END, ""))
    return items


class _LabelParser:
    def __init__(self, text: str) -> None:
        self._items = _lex(text)
        self._pos = 0

    def _peek(self, values: bool = False) -> tuple[str, str]:
        tok, lit = self._items[self._pos]
        return (_IDENT, lit) if values and tok in (IN, NOT_IN) else (tok, lit)

    def _next(self, values: bool = False) -> tuple[str, str]:
        item = self._peek(values)
        self._pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self._peek(values=True)
            if tok == _END:
                return reqs
            if tok not in (_IDENT, DOES_NOT_EXIST):
                raise errors.bad_request(
                    f"found '{lit}', expected: !, identifier, or 'end of string'"
                )
            reqs.append(self._requirement())
            tok, lit = self._next(values=True)
            if tok == _END:
                return reqs
            if tok != _COMMA:
                raise errors.bad_request(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self._peek(values=True)
            if tok not in (_IDENT, DOES_NOT_EXIST):
                raise errors.bad_request(f"found '{lit}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        operator = ""
        tok, lit = self._next(values=True)
        if tok == DOES_NOT_EXIST:
            operator = DOES_NOT_EXIST
            tok, lit = self._next(values=True)
        if tok != _IDENT:
            raise _syntax(f"found '{lit}', expected: identifier")
        key = lit
        key_errs = names.is_qualified_name(key)
        if key_errs:
            raise _syntax(_invalid("key", key, "; ".join(key_errs)))
        if self._peek(values=True)[0] in (_END, _COMMA):
            return self._checked(key, operator or EXISTS, [])
        if operator == DOES_NOT_EXIST:
            return self._checked(key, operator, [])
        tok, lit = self._next()
        if tok not in _BINARY_OPERATORS:
            raise _syntax(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        values = self._values() if tok in (IN, NOT_IN) else self._exact_value()
        return self._checked(key, tok, values)

    @staticmethod
    def _checked(key: str, operator: str, values: list[str]) -> Requirement:
        problems = requirement_problems(key, operator, values)
        if problems:
            raise _syntax(_aggregate(problems))
        return Requirement(key, operator, tuple(values))

    def _values(self) -> list[str]:
        tok, lit = self._next(values=True)
        if tok != _OPEN:
            raise _syntax(f"found '{lit}' expected: '('")
        tok, lit = self._peek(values=True)
        if tok == _CLOSE:
            self._next(values=True)
            return [""]
        if tok not in (_IDENT, _COMMA):
            raise _syntax(f"found '{lit}', expected: ',', ')' or identifier")
        values = self._identifiers()
        tok, lit = self._next(values=True)
        if tok != _CLOSE:
            raise _syntax(f"found '{lit}', expected: ')'")
        return values

    def _identifiers(self) -> list[str]:
        out: dict[str, None] = {}
        while True:
            tok, lit = self._next(values=True)
            if tok == _IDENT:
                out[lit] = None
                nxt, nxt_lit = self._peek(values=True)
                if nxt == _CLOSE:
                    return list(out)
                if nxt != _COMMA:
                    raise _syntax(f"found '{nxt_lit}', expected: ',' or ')'")
            elif tok == _COMMA:
                if not out:
                    out[""] = None
                nxt = self._peek(values=True)[0]
                if nxt == _CLOSE:
                    out[""] = None
                    return list(out)
                if nxt == _COMMA:
                    self._next(values=True)
                    out[""] = None
            else:
                raise _syntax(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> list[str]:
        tok, _ = self._peek(values=True)
        if tok in (_END, _COMMA):
            return [""]
        tok, lit = self._next(values=True)
        if tok == _IDENT:
            return [lit]
        raise _syntax(f"found '{lit}', expected: identifier")


def _syntax(message: str) -> errors.StatusError:
    return errors.bad_request(f"unable to parse requirement: {message}")
