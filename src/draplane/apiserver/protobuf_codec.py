"""The schema-driven protobuf codec: a kind's JSON dict to and from the message upstream's
`generated.proto` describes, read off the `Struct`/`Field` model (`Field.tag`, `wire`,
`pointer`, `embedded`). The wire primitives and the `k8s\\0` envelope are `protobuf`'s; which
kinds are served, their envelopes and watch frames are `protobuf_serving`'s.

Wire forms, as upstream's generated code: strings and bytes are length-delimited, int32/int64
and bool varints (a negative int32 as a 10-byte varint), double fixed64; resource.Quantity is
{1: string}; metav1.Time and MicroTime {1: seconds, 2: nanos} (Time keeps seconds in JSON,
MicroTime microseconds); IntOrString {1: type, 2: intVal, 3: strVal}; metav1.Duration {1: int64
nanoseconds}; a free-form value (`json`, `wire="raw"`) {1: its JSON bytes}, or the message of
the struct its `wire` names (openAPIV3Schema), with JSONSchemaProps' either-or fields in
`protobuf_schemaor`'s forms; map<string, X>
repeated {1: key, 2: value}; a list inside a list or map a message {1: repeated items}.
Repeated scalars are read packed or not. TypeMeta is not in the message (the envelope holds
it). Encoding writes a field iff the JSON holds it (a Go decoder reads an absent non-pointer
field as the zero value it would have written); decoding drops non-pointer zero values unless
the field is `emit`, as Go's omitempty would when re-encoding as JSON, and skips unknown
fields.

Each struct's fields are compiled once into an encoder and a decoder per field (`_Plan`); a
struct's plan is shared by every `Schemas` holding it, nested structs being looked up in the
`Schemas` at hand.
"""

from __future__ import annotations

import base64
import struct as _struct
from collections.abc import Callable
from typing import Any

import orjson

from draplane.api import limits
from draplane.api.goduration import format_duration, parse_duration
from draplane.api.schema import walk
from draplane.api.schema.model import Arr, Field, Map, Schemas, Struct, Type, is_struct
from draplane.apiserver import protobuf, protobuf_schemaor
from draplane.apiserver.protobuf import WireError, encode_varint, fields, length_delimited

_VARINT = ("int32", "int64", "boolean")
_ZEROS: tuple[Any, ...] = ("", 0, False, None, [], {})

Encoder = Callable[[Schemas, Any], bytes]
"""A field's bytes (key included) from its JSON value."""
Decoder = Callable[[Schemas, int, Any, int], Any]
"""One occurrence's JSON value from (schemas, wire type, raw value, depth)."""
Adder = Callable[[Schemas, int, Any, dict[str, Any], int], None]
"""Adds one occurrence of a field to the object being decoded."""


class EncodeError(ValueError):
    """A JSON value the schema's protobuf form cannot hold (the response falls back to JSON)."""


def encode(schemas: Schemas, name: str, obj: dict[str, Any]) -> bytes:
    """The protobuf message of `obj`, a JSON dict of struct `name` (TypeMeta left out)."""
    try:
        return _encode_struct(schemas, schemas.get(name), obj)
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as err:
        raise EncodeError(f"cannot encode {name} as protobuf: {err}") from err


def decode(schemas: Schemas, name: str, raw: bytes) -> dict[str, Any]:
    """The JSON dict of protobuf message `raw` of struct `name`, as Go would serialize the
    decoded object (`emit` fields present); WireError when malformed."""
    st = schemas.get(name)
    try:
        obj = _decode_struct(schemas, st, raw, 1)
    except WireError:
        raise
    except (ValueError, TypeError, OverflowError) as err:  # UnicodeDecodeError, bad JSON
        raise WireError(str(err)) from err
    walk.normalize(schemas, st, obj)  # the fields Go's JSON encoder always writes
    return obj


# -- plans ---------------------------------------------------------------------------------


class _Plan:
    """A struct compiled: encoders of its numbered fields in wire order (with the number of the
    embedded struct holding each, 0 for none), adders by field number, those of its embedded
    structs by the embedded struct's number, and the fields whose zero value is dropped."""

    __slots__ = ("adders", "droppable", "embedded", "encoders", "flat")

    def __init__(self, st: Struct) -> None:
        numbered = sorted((f for f in st.fields if f.tag), key=lambda f: f.embedded or f.tag)
        self.encoders = tuple(
            (f.name, f.embedded, _field_encoder(f, f.tag, f.type)) for f in numbered
        )
        self.flat = not any(f.embedded for f in numbered)
        self.adders: dict[int, Adder] = {}
        self.embedded: dict[int, dict[int, Adder]] = {}
        for f in numbered:
            target = self.embedded.setdefault(f.embedded, {}) if f.embedded else self.adders
            target[f.tag] = _adder(f)
        # A struct on the wire is kept: a non-pointer one is `emit`, a pointer one was set.
        self.droppable = frozenset(
            f.name for f in numbered if not (f.emit or f.pointer or _message(f))
        )


def _message(fld: Field) -> bool:
    """Whether the field is a message whose presence is kept (`false` of a schemaorbool)."""
    return is_struct(fld.type) or is_struct(fld.wire) or fld.wire in protobuf_schemaor.WIRES


_PLANS: dict[int, tuple[Struct, _Plan]] = {}
"""id(struct) -> (the struct, its plan); the struct is held so its id is not reused."""


def _plan(st: Struct) -> _Plan:
    found = _PLANS.get(id(st))
    if found is not None and found[0] is st:
        return found[1]
    plan = _Plan(st)
    _PLANS[id(st)] = (st, plan)
    return plan


# -- encoding ------------------------------------------------------------------------------


def _encode_struct(schemas: Schemas, st: Struct, obj: Any) -> bytes:
    if not isinstance(obj, dict):
        raise TypeError(f"{obj!r} is not an object")
    plan = _plan(st)
    get = obj.get
    if plan.flat:
        return b"".join(
            [enc(schemas, v) for name, _, enc in plan.encoders if (v := get(name)) is not None]
        )
    out: list[bytes] = []
    groups: dict[int, list[bytes]] = {}
    for name, embedded, enc in plan.encoders:
        if (value := get(name)) is not None:
            (groups.setdefault(embedded, []) if embedded else out).append(enc(schemas, value))
    out.extend(length_delimited(number, b"".join(parts)) for number, parts in groups.items())
    return b"".join(out)


def _field_encoder(fld: Field, number: int, t: Type) -> Encoder:
    if isinstance(t, Arr):
        item = _value_encoder(fld, number, t.item)

        def encode_list(schemas: Schemas, value: Any) -> bytes:
            if not isinstance(value, list):
                raise TypeError(f"{fld.name}: {value!r} is not a list")
            return b"".join([item(schemas, v) for v in value if v is not None])

        return encode_list
    if isinstance(t, Map):
        entry_value = _value_encoder(fld, 2, t.value)

        def encode_map(schemas: Schemas, value: Any) -> bytes:
            if not isinstance(value, dict):
                raise TypeError(f"{fld.name}: {value!r} is not an object")
            entries = []
            for key in sorted(value):
                entry = length_delimited(1, str(key).encode())
                if (v := value[key]) is not None:
                    entry += entry_value(schemas, v)
                entries.append(length_delimited(number, entry))
            return b"".join(entries)

        return encode_map
    return _value_encoder(fld, number, t)


def _value_encoder(fld: Field, number: int, t: Type) -> Encoder:
    ld_key, varint_key = encode_varint(number << 3 | 2), encode_varint(number << 3)

    def ld(data: bytes) -> bytes:
        return ld_key + encode_varint(len(data)) + data

    def wrong(value: Any) -> TypeError:
        return TypeError(f"{fld.name}: {value!r} is not a {t}")

    if not isinstance(t, str):  # a list in a list or a map: a message of repeated items
        inner = _field_encoder(fld, 1, t)
        return lambda schemas, v: ld(inner(schemas, v))
    if fld.wire == "duration":
        return lambda _, v: ld(b"\x08" + encode_varint(parse_duration(v)))
    if fld.wire in protobuf_schemaor.WIRES:
        wire = fld.wire

        def encode_either(schemas: Schemas, value: Any) -> bytes:
            schema = schemas.get(protobuf_schemaor.SCHEMA)
            return ld(
                protobuf_schemaor.encode(wire, value, lambda v: _encode_struct(schemas, schema, v))
            )

        return encode_either
    if is_struct(fld.wire):  # a free-form object sent as a struct's message
        t = fld.wire
    if fld.wire == "raw" or t in ("json", "object"):
        return lambda _, v: ld(length_delimited(1, orjson.dumps(v)))
    if t == "string":

        def encode_string(_: Schemas, value: Any) -> bytes:
            if not isinstance(value, str):
                raise wrong(value)
            return ld(value.encode())

        return encode_string
    if t in ("int32", "int64"):

        def encode_int(_: Schemas, value: Any) -> bytes:
            if not isinstance(value, int) or isinstance(value, bool):
                raise wrong(value)
            return varint_key + encode_varint(value)

        return encode_int
    if t == "boolean":

        def encode_bool(_: Schemas, value: Any) -> bytes:
            if not isinstance(value, bool):
                raise wrong(value)
            return varint_key + (b"\x01" if value else b"\x00")

        return encode_bool
    if t == "byte":
        return lambda _, v: ld(base64.b64decode(v, validate=True))
    if t == "double":
        fixed_key = encode_varint(number << 3 | 1)
        return lambda _, v: fixed_key + _struct.pack("<d", float(v))
    if t == "quantity":
        return lambda _, v: ld(length_delimited(1, str(v).encode()))
    if t in ("time", "microtime"):
        return lambda _, v: ld(protobuf.encode_timestamp(v))
    if t == "intorstring":
        return lambda _, v: ld(protobuf.encode_int_or_string(v))
    return lambda schemas, v: ld(_encode_struct(schemas, schemas.get(t), v))


# -- decoding ------------------------------------------------------------------------------


def _decode_struct(schemas: Schemas, st: Struct, raw: bytes, depth: int) -> dict[str, Any]:
    if depth > limits.MAX_DEPTH:
        raise WireError(f"the object is nested more than {limits.MAX_DEPTH} levels deep")
    plan = _plan(st)
    adders, embedded = plan.adders, plan.embedded
    out: dict[str, Any] = {}
    for number, wire, value in fields(raw):
        add = adders.get(number)
        if add is not None:
            add(schemas, wire, value, out, depth)
        elif number in embedded and wire == 2:
            inner = embedded[number]
            for sub, sub_wire, sub_value in fields(value):
                if (sub_add := inner.get(sub)) is not None:
                    sub_add(schemas, sub_wire, sub_value, out, depth)
    for name in plan.droppable.intersection(out):
        if out[name] in _ZEROS:
            del out[name]
    return out


def _adder(fld: Field) -> Adder:
    name, t = fld.name, fld.type
    if isinstance(t, Arr):
        item = _value_decoder(fld, t.item)
        packed = _packed_decoder(fld, t.item)

        def add_item(
            schemas: Schemas, wire: int, value: Any, out: dict[str, Any], depth: int
        ) -> None:
            items = out.setdefault(name, [])
            if wire == 2 and packed is not None:
                items.extend(packed(value))
            else:
                items.append(item(schemas, wire, value, depth))

        return add_item
    if isinstance(t, Map):
        entry_value = _value_decoder(fld, t.value)
        zero = _zero(t.value)

        def add_entry(
            schemas: Schemas, wire: int, value: Any, out: dict[str, Any], depth: int
        ) -> None:
            key, found = "", None
            for number, entry_wire, v in fields(_want(fld, wire, 2, value)):
                if number == 1:
                    key = _want(fld, entry_wire, 2, v).decode()
                elif number == 2:
                    found = entry_value(schemas, entry_wire, v, depth)
            out.setdefault(name, {})[key] = zero if found is None else found

        return add_entry
    one = _value_decoder(fld, t)

    def add_one(schemas: Schemas, wire: int, value: Any, out: dict[str, Any], depth: int) -> None:
        out[name] = one(schemas, wire, value, depth)

    return add_one


def _packed_decoder(fld: Field, t: Type) -> Callable[[bytes], list[Any]] | None:
    """Reads a packed repeated scalar (varints or doubles), None for other item types."""
    if t in _VARINT:
        convert = _SCALARS[t]  # type: ignore[index]

        def unpack_varints(data: bytes) -> list[Any]:
            out, pos = [], 0
            while pos < len(data):
                number, pos = protobuf.read_varint(data, pos)
                out.append(convert(number))
            return out

        return unpack_varints
    if t == "double" and fld.wire != "raw":

        def unpack_doubles(data: bytes) -> list[Any]:
            if len(data) % 8:
                raise WireError(f"field {fld.name}: packed doubles of {len(data)} bytes")
            return [v for (v,) in _struct.iter_unpack("<d", data)]

        return unpack_doubles
    return None


def _want(fld: Field, wire: int, expected: int, value: Any) -> Any:
    if wire != expected:
        raise WireError(f"field {fld.name}: wrong wire type {wire}, want {expected}")
    return value


_SCALARS: dict[str, Callable[[int], Any]] = {
    "int32": protobuf.int32,
    "int64": protobuf.int64,
    "boolean": bool,
}


def _value_decoder(fld: Field, t: Type) -> Decoder:
    def data_of(wire: int, value: Any) -> bytes:
        data: bytes = _want(fld, wire, 2, value)
        return data

    if not isinstance(t, str):  # a list in a list or a map
        inner = _adder(Field(fld.name, t, "", wire=fld.wire))
        empty: Callable[[], Any] = list if isinstance(t, Arr) else dict

        def decode_nested(schemas: Schemas, wire: int, value: Any, depth: int) -> Any:
            items: dict[str, Any] = {}
            for number, item_wire, item_value in fields(data_of(wire, value)):
                if number == 1:
                    inner(schemas, item_wire, item_value, items, depth + 1)
            return items.get(fld.name) or empty()

        return decode_nested
    if t in _VARINT:
        convert = _SCALARS[t]
        return lambda _, wire, v, __: convert(_want(fld, wire, 0, v))
    if t == "double":
        return lambda _, wire, v, __: _struct.unpack("<d", _want(fld, wire, 1, v))[0]
    if fld.wire == "duration":
        return lambda _, wire, v, __: format_duration(
            protobuf.int64(protobuf.first_field(data_of(wire, v), 0) or 0)
        )
    if fld.wire in protobuf_schemaor.WIRES:
        either = fld.wire

        def decode_either(schemas: Schemas, wire: int, value: Any, depth: int) -> Any:
            schema = schemas.get(protobuf_schemaor.SCHEMA)
            return protobuf_schemaor.decode(
                either,
                data_of(wire, value),
                lambda data: _decode_struct(schemas, schema, data, depth + 1),
            )

        return decode_either
    if is_struct(fld.wire):  # a free-form object sent as a struct's message
        t = fld.wire
    if fld.wire == "raw" or t in ("json", "object"):
        return lambda _, wire, v, __: _json_of(protobuf.first_field(data_of(wire, v), 2))
    if t == "string":
        return lambda _, wire, v, __: data_of(wire, v).decode()
    if t == "byte":
        return lambda _, wire, v, __: base64.b64encode(data_of(wire, v)).decode()
    if t == "quantity":
        return lambda _, wire, v, __: (protobuf.first_field(data_of(wire, v), 2) or b"0").decode()
    if t in ("time", "microtime"):
        micro = t == "microtime"
        return lambda _, wire, v, __: protobuf.decode_timestamp(data_of(wire, v), micro=micro)
    if t == "intorstring":
        return lambda _, wire, v, __: protobuf.decode_int_or_string(data_of(wire, v))
    return lambda schemas, wire, v, depth: _decode_struct(
        schemas, schemas.get(t), data_of(wire, v), depth + 1
    )


def _json_of(raw: bytes | None) -> Any:
    return orjson.loads(raw) if raw else None


def _zero(t: Type) -> Any:
    if isinstance(t, Arr):
        return []
    if isinstance(t, Map) or is_struct(t):
        return {}
    return {"string": "", "byte": "", "boolean": False, "quantity": "0"}.get(t, 0)
