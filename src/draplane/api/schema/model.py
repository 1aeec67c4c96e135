"""The schema model: `Field`, `Struct`, the field types, the registry of structs and kinds, and
`Schemas`, what one Kubernetes version serves of them.

A field's type is one of:
- a primitive name: `string`, `int32`, `int64`, `boolean`, `double`, `byte` (base64 string),
  `quantity`, `time` (metav1.Time), `microtime`, `intorstring`, `object` (a free-form object,
  x-kubernetes-preserve-unknown-fields), `json` (any JSON value);
- the OpenAPI name of a registered `Struct` (it contains a dot: `io.k8s.api.core.v1.PodSpec`);
- `Arr(t)` (a JSON array of `t`) or `Map(t)` (an object with arbitrary keys, values `t`).

Structs and kinds are registered at module level (`struct`, `override`, `register_kind`); a
consumer is handed the `Schemas` of the version it serves (`schemas_for(mode.name)`; "" is the
base, outside any mode) and looks structs up there, never in a process-wide "current" version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

PRIMITIVES: dict[str, tuple[str, str]] = {
    "string": ("string", ""),
    "int32": ("integer", "int32"),
    "int64": ("integer", "int64"),
    "boolean": ("boolean", ""),
    "double": ("number", "double"),
    "byte": ("string", "byte"),
}
"""Primitive name -> (OpenAPI type, format)."""

SPECIAL = {
    "quantity": "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "time": "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "microtime": "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "intorstring": "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
}
"""Named scalar types with their own OpenAPI definition."""

FREE = ("object", "json")


@dataclass(frozen=True, slots=True)
class Arr:
    item: Type


@dataclass(frozen=True, slots=True)
class Map:
    value: Type


Type = str | Arr | Map


@dataclass(frozen=True, slots=True)
class Field:
    """One JSON field of a Go struct.

    `emit`: the Go field is serialized even when empty: a non-pointer struct (`{}`), a non-pointer
    metav1.Time (`null`) or a field without `omitempty` (its zero value). `required` is
    OpenAPI's `required`. The list/patch attributes are upstream's `x-kubernetes-*` markers.

    The protobuf form (`application/vnd.kubernetes.protobuf`) comes from the same field: `tag` is
    its field number in upstream's `generated.proto` (the Go field's `protobuf:"...,N,..."` tag;
    0 while unnumbered), `wire` names a protobuf form the JSON type does not tell (`raw`: a
    message whose field 1 holds the value's JSON bytes, as metav1.FieldsV1 and
    runtime.RawExtension do; `duration`: metav1.Duration, int64 nanoseconds in field 1; the
    name of a struct: a free-form `object` encoded as that struct's message, as
    CustomResourceValidation's openAPIV3Schema is a JSONSchemaProps; in a JSONSchemaProps,
    `schemaorbool` {bool allows = 1, schema = 2}, `schemaorarray` {schema = 1, repeated
    jSONSchemas = 2} and `schemaorstringarray` {schema = 1, repeated string property = 2}, the
    schemas being JSONSchemaProps; on a list or map, the form of each item or value), and
    `pointer` marks a Go pointer scalar, whose zero value on the wire is kept (a non-pointer
    zero is dropped, as Go's `omitempty` drops it). `embedded` is the field number of the
    embedded Go struct the field belongs to when JSON inlines it but protobuf does not: a
    Volume's sources are fields of its VolumeSource (Volume field 2), so `hostPath` has `tag=1,
    embedded=2`; likewise Probe's ProbeHandler (1), EphemeralContainer's
    EphemeralContainerCommon (1), PersistentVolumeSpec's PersistentVolumeSource (2; capacity is
    1) and the LocalObjectReference a ConfigMap or Secret selector inlines (1).
    """

    name: str
    type: Type
    description: str
    required: bool = False
    emit: bool = False
    enum: tuple[str, ...] = ()
    patch_strategy: str = ""
    merge_key: str = ""
    list_type: str = ""
    map_keys: tuple[str, ...] = ()
    map_type: str = ""
    tag: int = 0
    wire: str = ""
    pointer: bool = False
    embedded: int = 0


@dataclass(frozen=True, slots=True)
class Struct:
    """A Go struct: its OpenAPI name, description and fields (in Go order).

    `preserve`: the struct also accepts fields it does not list (a subtree modelled only at its
    top, x-kubernetes-preserve-unknown-fields)."""

    name: str
    description: str
    fields: tuple[Field, ...]
    preserve: bool = False
    by_name: dict[str, Field] = field(default_factory=dict, compare=False, repr=False)
    emitted: list[Field] = field(default_factory=list, compare=False, repr=False)
    """The fields Go serializes even when empty."""
    nested: dict[str, Type] = field(default_factory=dict, compare=False, repr=False)
    """The fields holding structs (directly, in a list or as map values)."""

    def __post_init__(self) -> None:
        self.by_name.update((f.name, f) for f in self.fields)
        self.emitted.extend(f for f in self.fields if f.emit)
        for fld in self.fields:
            leaf = fld.type.item if isinstance(fld.type, Arr) else fld.type
            leaf = leaf.value if isinstance(leaf, Map) else leaf
            if is_struct(leaf):
                self.nested[fld.name] = fld.type


_STRUCTS: dict[str, Struct] = {}
_KINDS: dict[tuple[str, str, str], str] = {}
_GENERATION = [0]
"""Changes whenever a struct or kind is registered or removed (`Schemas.generation`)."""
_OVERRIDES: dict[str, dict[str, Struct]] = {}
"""Kubernetes version (a mode's name, `1.36`) -> the structs it serves differently, by name."""


def f(name: str, type_: Type, description: str, **kw: object) -> Field:
    """A field; keyword arguments as `Field`'s (`merge="name"` sets patch strategy merge)."""
    merge = kw.pop("merge", None)
    if merge:
        kw.setdefault("patch_strategy", "merge")
        kw["merge_key"] = merge
    if kw.get("list_type") == "map" and "map_keys" not in kw and merge:
        kw["map_keys"] = (merge,)
    if kw.get("required") and not isinstance(type_, Arr | Map):
        kw.setdefault("emit", True)  # no omitempty: Go serializes the zero value
    return Field(name, type_, description, **kw)  # type: ignore[arg-type]


def struct(name: str, description: str, *fields: Field, preserve: bool = False) -> str:
    """Register a struct and return its name (to use as a field type)."""
    if name in _STRUCTS:
        raise ValueError(f"struct {name} is registered twice")
    _STRUCTS[name] = Struct(name, description, tuple(fields), preserve)
    _GENERATION[0] += 1
    return name


def override(version: str, name: str, description: str, *fields: Field) -> str:
    """Serve struct `name` with these fields in `version`'s `Schemas`: the one
    mechanism by which a Go type differs between the Kubernetes versions draplane serves
    (core/v1 PodResourceClaim lost `source` in 1.31). Every struct that refers to `name` (a
    Pod, a Deployment's template) follows, in decoding, serialization, OpenAPI and patches."""
    if name not in _STRUCTS:
        raise ValueError(f"struct {name} is not registered")
    _OVERRIDES.setdefault(version, {})[name] = Struct(name, description, tuple(fields))
    _GENERATION[0] += 1
    return name


def extend(version: str, name: str, *fields: Field) -> str:
    """`override` with struct `name`'s fields in `version` (its base fields, or an earlier
    override's) followed by `fields`: a Go type that gained fields since 1.28."""
    current = _OVERRIDES.get(version, {}).get(name) or _STRUCTS.get(name)
    if current is None:
        raise ValueError(f"struct {name} is not registered")
    return override(version, name, current.description, *current.fields, *fields)


def register_kind(group: str, version: str, kind: str, struct_name: str) -> None:
    """Serve `struct_name` as the schema of group/version/kind ("" is the core group)."""
    _KINDS[(group, version, kind)] = struct_name
    _GENERATION[0] += 1


def unregister_kind(group: str, version: str, kind: str) -> None:
    _KINDS.pop((group, version, kind), None)
    _GENERATION[0] += 1


def unregister_struct(name: str) -> None:
    _STRUCTS.pop(name, None)
    _GENERATION[0] += 1


def is_struct(t: Type) -> bool:
    return isinstance(t, str) and "." in t


def structs() -> dict[str, Struct]:
    """The base structs (no version's overrides), by name."""
    return dict(_STRUCTS)


GVK = tuple[str, str, str]


@dataclass(frozen=True, slots=True, eq=False)
class Schemas:
    """The structs and kinds one Kubernetes version serves, as of one `generation` of the
    registry: what decoding, serialization, the OpenAPI documents, the patch tables and the
    protobuf codec read (`get` is a `Callable[[str], Struct]`). Compared and hashed by identity:
    `schemas_for` hands out one per version and generation, so caches may key on it."""

    version: str
    """A mode's name (`1.36`), or "" for the base structs."""
    generation: int
    structs: Mapping[str, Struct]
    """Every struct by name, the version's overrides in place of the base ones."""
    kinds: Mapping[GVK, Struct]
    """(group, version, kind) -> the struct served as its schema."""

    def get(self, name: str) -> Struct:
        return self.structs[name]

    def kind_struct(self, group: str, version: str, kind: str) -> Struct | None:
        return self.kinds.get((group, version, kind))

    def kinds_of(self, struct_name: str) -> list[GVK]:
        """The (group, version, kind) served with this struct as their schema."""
        return [gvk for gvk, found in self.kinds.items() if found.name == struct_name]


_SCHEMAS: dict[str, Schemas] = {}


def schemas_for(version: str = "") -> Schemas:
    """The `Schemas` of Kubernetes version `version` (a mode's name; "" the base), rebuilt
    only when a struct or kind was registered or removed since."""
    found = _SCHEMAS.get(version)
    if found is None or found.generation != _GENERATION[0]:
        overrides = _OVERRIDES.get(version)
        by_name = {**_STRUCTS, **overrides} if overrides else dict(_STRUCTS)
        by_kind = {gvk: by_name[n] for gvk, n in _KINDS.items() if n in by_name}
        found = _SCHEMAS[version] = Schemas(version, _GENERATION[0], by_name, by_kind)
    return found
