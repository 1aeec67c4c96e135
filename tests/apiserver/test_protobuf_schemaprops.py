"""A CRD's openAPIV3Schema in protobuf: the free-form JSON schema sent as a JSONSchemaProps
message, its either-or fields (additionalProperties and additionalItems a schema or a bool,
items a schema or a list, each dependency a schema or a list of properties) as upstream's
JSONSchemaPropsOr* messages, JSON values (default, enum) as JSON messages; read back as sent."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import versions
from draplane.api.schema import schemas_for
from draplane.api.schema.apiextensions import VALIDATION
from draplane.apiserver import protobuf, protobuf_codec
from draplane.testing.protowire import ld, vi

SCHEMAS = schemas_for(versions.CLASSIC.name)
STRING = ld(5, b"string")
"""JSONSchemaProps {type: string}."""

CASES: dict[str, tuple[dict[str, Any], bytes]] = {
    "additional-properties-false": ({"additionalProperties": False}, ld(30, vi(1, 0))),
    "additional-properties-true": ({"additionalProperties": True}, ld(30, vi(1, 1))),
    "additional-properties-schema": (
        {"additionalProperties": {"type": "string"}},
        ld(30, vi(1, 1) + ld(2, STRING)),
    ),
    "additional-items-false": ({"additionalItems": False}, ld(33, vi(1, 0))),
    "items-schema": ({"items": {"type": "string"}}, ld(24, ld(1, STRING))),
    "items-list": (
        {"items": [{"type": "string"}, {"type": "integer"}]},
        ld(24, ld(2, STRING) + ld(2, ld(5, b"integer"))),
    ),
    "dependency-properties": (
        {"dependencies": {"a": ["b", "c"]}},
        ld(32, ld(1, b"a") + ld(2, ld(2, b"b") + ld(2, b"c"))),
    ),
    "dependency-schema": (
        {"dependencies": {"a": {"required": ["b"]}}},
        ld(32, ld(1, b"a") + ld(2, ld(1, ld(23, b"b")))),
    ),
    "json-values": (
        {"default": {"a": 1}, "enum": ["x", 2]},
        ld(8, ld(1, b'{"a":1}')) + ld(20, ld(1, b'"x"')) + ld(20, ld(1, b"2")),
    ),
    "nested": (
        {"type": "object", "properties": {"m": {"additionalProperties": False}}},
        ld(5, b"object") + ld(29, ld(1, b"m") + ld(2, ld(30, vi(1, 0)))),
    ),
}


@pytest.mark.parametrize(("schema", "wire"), CASES.values(), ids=CASES.keys())
def test_a_schema_round_trips_as_upstream_writes_it(schema: dict[str, Any], wire: bytes) -> None:
    obj = {"openAPIV3Schema": schema}

    encoded = protobuf_codec.encode(SCHEMAS, VALIDATION, obj)

    assert encoded == ld(1, wire)
    assert protobuf_codec.decode(SCHEMAS, VALIDATION, encoded) == obj


def test_a_schema_wins_over_a_bool_and_a_list_over_a_schema() -> None:
    """Read as upstream's MarshalJSON writes them back (a schema sent with `allows` false)."""
    wire = ld(30, vi(1, 0) + ld(2, STRING)) + ld(24, ld(1, STRING) + ld(2, STRING))

    decoded = protobuf_codec.decode(SCHEMAS, VALIDATION, ld(1, wire))

    assert decoded == {
        "openAPIV3Schema": {
            "items": [{"type": "string"}],
            "additionalProperties": {"type": "string"},
        }
    }


@pytest.mark.parametrize(
    "schema",
    [{"additionalProperties": "yes"}, {"items": 3}, {"dependencies": {"a": [1]}}],
    ids=["bool-not-a-bool", "items-not-a-list", "dependency-not-strings"],
)
def test_a_value_neither_form_holds_cannot_be_encoded(schema: dict[str, Any]) -> None:
    with pytest.raises(protobuf_codec.EncodeError):
        protobuf_codec.encode(SCHEMAS, VALIDATION, {"openAPIV3Schema": schema})


def test_an_either_member_of_the_wrong_wire_type_is_a_wire_error() -> None:
    with pytest.raises(protobuf.WireError):
        protobuf_codec.decode(SCHEMAS, VALIDATION, ld(1, ld(24, vi(1, 1))))
