"""Type-checking device selectors against upstream's `kubernetes.DRADevice` (the `device`
variable of k8s.io/dynamic-resource-allocation/cel).

Upstream declares `device` as an object type whose fields have their own types: `driver`
(string), `attributes` (map(string, map(string, any))), `capacity` (map(string, map(string,
Quantity))), `allowMultipleAllocations` (bool). cel-expr-python declares variables, not object
types, so the evaluating environment types `device` as map(string, dyn) and checks nothing about
its fields. Here each field spelled `device.<field>` is checked as a variable of its own,
`device_<field>` (the same length, so error columns stay upstream's); the source lines quoted in
an error are put back as written. A `device.<name>` that is not one of the fields is cel-go's
"undefined field" error.
"""

from __future__ import annotations

import re

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from draplane.dra.cel.library import kubernetes_functions

_DYN, _STRING = cel.Type.DYN, cel.Type.STRING
_DOMAIN_MAP = cel.Type.Map(_STRING, cel.Type.Map(_STRING, _DYN))
_FIELDS: dict[str, cel.Type] = {
    "driver": _STRING,
    "attributes": _DOMAIN_MAP,
    "capacity": _DOMAIN_MAP,
    "allowMultipleAllocations": cel.Type.BOOL,
}
_FIELD_REF = re.compile(r"(?<![\w.])device\.(" + "|".join(_FIELDS) + r")\b")
_RENAMED = re.compile(r"(?<![\w.])device_(" + "|".join(_FIELDS) + r")\b")
# A string literal (skipped) or a field of `device` that the object type does not have.
_UNKNOWN_FIELD = re.compile(
    r"""[rRbB]*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"|(?<![\w.])device(\.)(\w+)\b"
)
# cel-go prints the attribute value type (apiservercel.AnyType) as `any`; cel-expr-python
# knows only dyn. Capacity's Quantity values are dyn here too, so they print as `any` as well.
_TYPE_NAMES = {"map(string, map(string, dyn))": "map(string, map(string, any))"}


class DeviceTypeChecker:
    """An environment with `device`'s fields declared as upstream types them."""

    def __init__(self) -> None:
        variables = {"device": cel.Type.Map(_STRING, _DYN)}
        variables.update({f"device_{name}": t for name, t in _FIELDS.items()})
        self._env = cel.NewEnv(
            variables=variables,
            extensions=[
                ext_strings.ExtStrings(),
                ext_bindings.ExtBindings(),
                ext_optional.ExtOptional(),
                cel.CelExtension("kubernetes", kubernetes_functions()),
            ],
        )

    def check(self, expression: str) -> tuple[str | None, str | None]:
        """(the type errors in upstream's words, None) or (None, the output type's name)."""
        try:
            program = self._env.compile(_FIELD_REF.sub(r"device_\1", expression))
        except RuntimeError as e:
            return _message(str(e)), None
        unknown = _unknown_field(expression)
        if unknown is not None:
            return unknown, None
        return None, program.return_type().name().lower()


def _unknown_field(expression: str) -> str | None:
    """cel-go's "undefined field" error for the first `device.<name>` outside string literals
    whose name is not a field of kubernetes.DRADevice, at the column of the `.`."""
    for m in _UNKNOWN_FIELD.finditer(expression):
        if m.group(3) is None or m.group(3) in _FIELDS:
            continue
        dot = m.start(2)
        line_start = expression.rfind("\n", 0, dot) + 1
        line_end = expression.find("\n", dot)
        line = expression[line_start : None if line_end < 0 else line_end]
        row, col = expression.count("\n", 0, dot) + 1, dot - line_start
        return (
            f"ERROR: <input>:{row}:{col + 1}: undefined field '{m.group(3)}'\n"
            f" | {line}\n | {'.' * col}^"
        )
    return None


def _message(text: str) -> str:
    text = re.sub(r"^[A-Z_]+: ", "", text.strip())
    text = re.sub(r"\s*\[[A-Z_]+\]$", "", text)
    # cel-go reports only the first of a chain of errors; cel-cpp also reports each
    # expression built on an `*error*` operand.
    errors = [e for e in re.split(r"\n(?=ERROR: )", text) if "'*error*'" not in e]
    text = "\n".join(errors)
    text = _RENAMED.sub(r"device.\1", text)
    for ours, theirs in _TYPE_NAMES.items():
        text = text.replace(ours, theirs)
    return text
