"""The small template language of fleet files: `{name}`, `{name OP N}` (OP one of `+ - * // %`)
and an optional format spec (`{i:02x}`), with the variables a device or partition defines
(`i`, `node`, `uuid`, `parent`, `parent_uuid`, `parent_index`, `start`, `j`).

`Template.parse` checks the text once, against the variables its place allows, so a bad file
fails when it is loaded, never while a node publishes its slices.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_FIELD = re.compile(
    r"\{(?P<var>[a-z_]+)"
    r"(?:\s*(?P<op>//|[-+*%])\s*(?P<operand>\d+))?"
    r"(?::(?P<spec>[0-9a-zA-Z<>^=+ .,_-]*))?\}"
)

DEVICE_VARS = frozenset({"i", "node", "uuid"})
"""What a device's name and attributes may use: its index in its group, the node, its UUID."""
PARTITION_VARS = frozenset(
    {"i", "node", "uuid", "parent", "parent_uuid", "parent_index", "start", "j"}
)
"""A partition's: besides a device's, its parent device's name, UUID and index, its placement
start and its index among its profile's placements (`i` is the parent's index)."""
DEVICE_NAME_VARS = DEVICE_VARS - {"uuid"}
PARTITION_NAME_VARS = PARTITION_VARS - {"uuid"}
"""Names: everything but the UUID, which is derived from the name."""
COUNTER_SET_VARS = frozenset({"i", "node", "name"})
"""A counter set's name: the device's index, the node and the device's name."""
PLACEMENT_VARS = frozenset({"n"})
"""A placement counter's name: the slot `n` the partition occupies."""


class TemplateError(ValueError):
    """A template that does not parse or uses a variable its place does not define."""


@dataclass(frozen=True, slots=True)
class Template:
    text: str
    literal: bool
    """No field: the text is the value."""

    @staticmethod
    def parse(text: str, allowed: frozenset[str]) -> Template:
        end = 0
        found = False
        for field in _FIELD.finditer(text):
            _check_literal(text[end : field.start()], text)
            end = field.end()
            found = True
            var = field.group("var")
            if var not in allowed:
                names = ", ".join(sorted(allowed))
                raise TemplateError(f"{text!r}: unknown variable {var!r} (known: {names})")
            if field.group("op") in ("//", "%") and int(field.group("operand")) == 0:
                raise TemplateError(f"{text!r}: division by zero")
        _check_literal(text[end:], text)
        return Template(text, not found)

    def render(self, values: Mapping[str, str | int]) -> str:
        if self.literal:
            return self.text
        return _FIELD.sub(lambda field: _field(field, values), self.text)


def _check_literal(part: str, text: str) -> None:
    if "{" in part or "}" in part:
        raise TemplateError(f"{text!r}: a brace that opens no field (fields are {{name}})")


def _field(field: re.Match[str], values: Mapping[str, str | int]) -> str:
    value = values[field.group("var")]
    op = field.group("op")
    if op is not None:
        if not isinstance(value, int):
            raise TemplateError(f"{field.group(0)}: arithmetic on text {value!r}")
        operand = int(field.group("operand"))
        value = {
            "+": value + operand,
            "-": value - operand,
            "*": value * operand,
            "//": value // operand,
            "%": value % operand,
        }[op]
    spec = field.group("spec")
    return format(value, spec) if spec else str(value)
