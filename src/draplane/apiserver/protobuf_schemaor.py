"""The protobuf forms of a JSONSchemaProps' either-or fields (apiextensions.k8s.io/v1
generated.proto), for the codec (`protobuf_codec`): what JSON holds as a schema or something
else is one message with a member for each.

- `schemaorbool` (additionalProperties, additionalItems), JSONSchemaPropsOrBool
  {1: bool allows, 2: schema}: a schema is sent with `allows` true, as upstream's UnmarshalJSON
  sets it; read back, a schema wins over the bool.
- `schemaorarray` (items), JSONSchemaPropsOrArray {1: schema, 2: repeated schemas}: read back,
  a non-empty list wins over the schema.
- `schemaorstringarray` (each dependency), JSONSchemaPropsOrStringArray {1: schema, 2: repeated
  string property}: read back, a non-empty list wins, then the schema, else null.

The schemas are JSONSchemaProps messages; the codec hands in how to encode and decode one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draplane.api.schema.apiextensions import JSON_SCHEMA_PROPS
from draplane.apiserver.protobuf import WireError, fields, length_delimited

SCHEMA = JSON_SCHEMA_PROPS
"""The struct every schema member holds."""
WIRES = ("schemaorbool", "schemaorarray", "schemaorstringarray")

EncodeSchema = Callable[[Any], bytes]
DecodeSchema = Callable[[bytes], Any]


def encode(wire: str, value: Any, schema: EncodeSchema) -> bytes:
    """The message (without its key) of `value`, a JSON value of a `wire` field."""
    if isinstance(value, dict):
        if wire == "schemaorbool":
            return b"\x08\x01" + length_delimited(2, schema(value))
        return length_delimited(1, schema(value))
    if wire == "schemaorbool":
        if not isinstance(value, bool):
            raise TypeError(f"{value!r} is neither a schema nor a boolean")
        return b"\x08\x01" if value else b"\x08\x00"
    if not isinstance(value, list):
        raise TypeError(f"{value!r} is neither a schema nor a list")
    if wire == "schemaorarray":
        return b"".join(length_delimited(2, schema(item)) for item in value)
    if not all(isinstance(item, str) for item in value):
        raise TypeError(f"{value!r} is neither a schema nor a list of strings")
    return b"".join(length_delimited(2, item.encode()) for item in value)


def decode(wire: str, data: bytes, schema: DecodeSchema) -> Any:
    """The JSON value of a `wire` field's message."""
    found: Any = None
    allows = False
    items: list[Any] = []
    for number, item_wire, value in fields(data):
        if wire == "schemaorbool" and number == 1 and item_wire == 0:
            allows = bool(value)
        elif number == (2 if wire == "schemaorbool" else 1):
            found = schema(_bytes(wire, item_wire, value))
        elif number == 2:
            raw = _bytes(wire, item_wire, value)
            items.append(raw.decode() if wire == "schemaorstringarray" else schema(raw))
    if wire == "schemaorbool":
        return allows if found is None else found
    return items or found


def _bytes(wire: str, item_wire: int, value: Any) -> bytes:
    if item_wire != 2:
        raise WireError(f"{wire}: wrong wire type {item_wire}, want 2")
    data: bytes = value
    return data
