"""The Kubernetes CEL libraries device selectors use, as cel-expr-python extensions.

cel-expr-python carries no opaque host types, so a `Quantity` and a `Semver` travel through CEL as
one-entry maps tagged with a key no attribute name can have (`QUANTITY_TAG`, `SEMVER_TAG`); the
tagged value is canonical (a reduced fraction, a semver without build metadata), so CEL `==`
compares them by value as upstream's `Equal` does. The member functions below
(k8s.io/apiserver/pkg/cel/library: quantity, semver, lists) dispatch on the tag.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from cel_expr_python import cel

from draplane.api.quantity import parse_quantity

QUANTITY_TAG = "__kubernetes.Quantity__"
SEMVER_TAG = "__kubernetes.Semver__"

_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)


class CELFunctionError(ValueError):
    """Raised by a library function; CEL turns it into an evaluation error."""


def quantity_value(value: Fraction) -> dict[str, str]:
    """The CEL form of a quantity."""
    return {QUANTITY_TAG: str(value)}


def make_quantity(text: str) -> dict[str, str]:
    try:
        return quantity_value(parse_quantity(text))
    except ValueError as e:
        raise CELFunctionError(str(e)) from None


def parse_semver(text: str) -> tuple[int, int, int, str]:
    m = _SEMVER_RE.match(text)
    if m is None:
        raise CELFunctionError(f"Could not parse semver {text!r}: invalid semantic version")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def semver_value(text: str) -> dict[str, str]:
    """The CEL form of a version attribute; raises CELFunctionError for a bad version."""
    major, minor, patch, pre = parse_semver(text)
    canon = f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "")
    return {SEMVER_TAG: canon}


def _q(v: Any) -> Fraction:
    if isinstance(v, dict) and QUANTITY_TAG in v:
        return Fraction(v[QUANTITY_TAG])
    if isinstance(v, int) and not isinstance(v, bool):
        return Fraction(v)
    raise CELFunctionError("no such overload")


def _pre_key(pre: str) -> tuple[Any, ...]:
    # semver 2.0 precedence: a version without pre-release ranks higher.
    if not pre:
        return (1,)
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (0, parts)


def _sv(v: Any) -> tuple[int, int, int, tuple[Any, ...]]:
    if isinstance(v, dict) and SEMVER_TAG in v:
        major, minor, patch, pre = parse_semver(v[SEMVER_TAG])
        return major, minor, patch, _pre_key(pre)
    raise CELFunctionError("no such overload")


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, dict) and SEMVER_TAG in a:
        x: Any = _sv(a)
        y: Any = _sv(b)
    else:
        x, y = _q(a), _q(b)
    return int(x > y) - int(x < y)


def _as_integer(a: Any) -> int:
    v = _q(a)
    if v.denominator != 1 or not _INT64_MIN <= v.numerator <= _INT64_MAX:
        raise CELFunctionError("cannot convert value to integer")
    return v.numerator


def _check_list(items: Any) -> list[Any]:
    if not isinstance(items, list):
        raise CELFunctionError("no such overload")
    return items


def _sum(items: Any) -> Any:
    items = _check_list(items)
    if items and isinstance(items[0], dict):
        return quantity_value(sum((_q(i) for i in items), Fraction(0)))
    return sum(items)


def _extreme(pick: Callable[..., Any]) -> Callable[[Any], Any]:
    def impl(items: Any) -> Any:
        items = _check_list(items)
        if not items:
            raise CELFunctionError(f"{pick.__name__}(list) called on empty list")
        if isinstance(items[0], dict):
            return pick(items, key=lambda i: _q(i) if QUANTITY_TAG in i else _sv(i))
        return pick(items)

    return impl


def _is_sorted(items: Any) -> bool:
    items = _check_list(items)
    return all(
        _cmp(a, b) <= 0 if isinstance(a, dict) else a <= b for a, b in itertools.pairwise(items)
    )


def _index_of(items: Any, x: Any) -> int:
    return next((i for i, v in enumerate(_check_list(items)) if v == x), -1)


def _last_index_of(items: Any, x: Any) -> int:
    items = _check_list(items)
    return next((i for i in range(len(items) - 1, -1, -1) if items[i] == x), -1)


def _is(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def impl(text: str) -> bool:
        try:
            parse(text)
        except (ValueError, CELFunctionError):
            return False
        return True

    return impl


_M = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)
_L = cel.Type.List(cel.Type.DYN)
_S, _I, _B, _D = cel.Type.STRING, cel.Type.INT, cel.Type.BOOL, cel.Type.DOUBLE


def _member(
    name: str, ret: cel.Type, args: list[cel.Type], impl: Callable[..., Any]
) -> cel.FunctionDecl:
    oid = f"k8s_{name}_" + "_".join(a.name().lower() for a in args)
    return cel.FunctionDecl(name, [cel.Overload(oid, ret, args, is_member=True, impl=impl)])


def _global(
    name: str, ret: cel.Type, args: list[cel.Type], impl: Callable[..., Any]
) -> cel.FunctionDecl:
    return cel.FunctionDecl(name, [cel.Overload(f"k8s_{name}", ret, args, impl=impl)])


def kubernetes_functions() -> list[cel.FunctionDecl]:
    """Quantity, semver and list functions of the Kubernetes base environment."""
    return [
        _global("quantity", _M, [_S], make_quantity),
        _global("isQuantity", _B, [_S], _is(parse_quantity)),
        _global("semver", _M, [_S], semver_value),
        _global("isSemver", _B, [_S], _is(parse_semver)),
        _member("compareTo", _I, [_M, _M], _cmp),
        _member("isLessThan", _B, [_M, _M], lambda a, b: _cmp(a, b) < 0),
        _member("isGreaterThan", _B, [_M, _M], lambda a, b: _cmp(a, b) > 0),
        cel.FunctionDecl(
            "add",
            [
                cel.Overload(
                    "k8s_add_quantity",
                    _M,
                    [_M, _M],
                    is_member=True,
                    impl=lambda a, b: quantity_value(_q(a) + _q(b)),
                ),
                cel.Overload(
                    "k8s_add_int",
                    _M,
                    [_M, _I],
                    is_member=True,
                    impl=lambda a, b: quantity_value(_q(a) + b),
                ),
            ],
        ),
        cel.FunctionDecl(
            "sub",
            [
                cel.Overload(
                    "k8s_sub_quantity",
                    _M,
                    [_M, _M],
                    is_member=True,
                    impl=lambda a, b: quantity_value(_q(a) - _q(b)),
                ),
                cel.Overload(
                    "k8s_sub_int",
                    _M,
                    [_M, _I],
                    is_member=True,
                    impl=lambda a, b: quantity_value(_q(a) - b),
                ),
            ],
        ),
        _member("asInteger", _I, [_M], _as_integer),
        _member("asApproximateFloat", _D, [_M], lambda a: float(_q(a))),
        _member("sign", _I, [_M], lambda a: (_q(a) > 0) - (_q(a) < 0)),
        _member("isInteger", _B, [_M], lambda a: _q(a).denominator == 1),
        _member("major", _I, [_M], lambda a: _sv(a)[0]),
        _member("minor", _I, [_M], lambda a: _sv(a)[1]),
        _member("patch", _I, [_M], lambda a: _sv(a)[2]),
        _member("isSorted", _B, [_L], _is_sorted),
        _member("sum", cel.Type.DYN, [_L], _sum),
        _member("min", cel.Type.DYN, [_L], _extreme(min)),
        _member("max", cel.Type.DYN, [_L], _extreme(max)),
        _member("lastIndexOf", _I, [_L, cel.Type.DYN], _last_index_of),
    ]
