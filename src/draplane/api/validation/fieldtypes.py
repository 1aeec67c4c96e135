"""The decoding step of a write: JSON types, unknown and duplicate fields, per kind's schema.

kube-apiserver decodes a body into Go structs first, so a string where a list belongs never
reaches validation, storage or a reader, and a field the Go type lacks is reported according
to `fieldValidation`. draplane keeps objects as dicts; this module is that step, over the
`Schemas` of the Kubernetes version served (`draplane.api.schema`, passed by the caller):

- a field of the wrong JSON type: `<path>: Invalid value: <value>: must be a string`
  (FieldValueTypeInvalid, 422 Invalid); null is accepted anywhere (Go leaves the zero value);
- unknown fields (`spec.foo`, `spec.containers[0].bar`) and duplicate fields (the HTTP layer
  finds those in JSON and YAML bodies): `Strict` fails with 400 BadRequest, `<Kind> in version "<v>"
  cannot be handled as a <Kind>: strict decoding error: unknown field "spec.foo", duplicate
  field "spec.bar"`; `Warn` (the default, as upstream) drops them with one warning each;
  `Ignore` drops them silently. A custom resource's unknown fields are those its structural
  schema prunes (`structural.unknown_fields`), reported the same way.
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors, schema, structural, warnings
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.schema import Schemas
from draplane.api.validation.objectmeta import type_invalid

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
MODES = frozenset({STRICT, WARN, IGNORE})


def type_errors(rt: ResourceType, obj: Any, schemas: Schemas) -> list[FieldError]:
    """Every field of `obj` whose JSON type is not the one kind `rt` gives it in `schemas`."""
    found = schema.decode(schemas, schema.for_resource(schemas, rt), obj)
    return [type_invalid(e.path, e.value, e.detail) for e in found.errors]


def strict_message(rt: ResourceType, problems: list[str]) -> str:
    return (
        f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
        f"strict decoding error: {', '.join(problems)}"
    )


def decode_fields(
    rt: ResourceType,
    obj: Any,
    schemas: Schemas,
    *,
    mode: str = "",
    duplicates: tuple[str, ...] = (),
    prune: bool = True,
) -> list[FieldError]:
    """Field validation of `obj` as kind `rt`: raise 400 under `Strict` when there are unknown
    or duplicate fields, else drop unknown fields (when `prune`) and warn under `Warn` (also
    the default, `mode` ""). Returns the type errors."""
    struct = schema.for_resource(schemas, rt)
    found = schema.decode(schemas, struct, obj, prune=prune and mode != STRICT)
    unknown = found.unknown
    if rt.custom is not None and mode != IGNORE and isinstance(obj, dict):
        # Custom resources: the fields pruning drops (apiextensions-apiserver's codec).
        unknown = unknown + structural.unknown_fields(rt.custom.schema, obj)
    problems = [f'unknown field "{p}"' for p in unknown]
    problems += [f'duplicate field "{p}"' for p in duplicates]
    if problems:
        if mode == STRICT:
            raise errors.bad_request(strict_message(rt, problems))
        if mode != IGNORE and prune:
            for problem in problems:
                warnings.add(problem)
    return [type_invalid(e.path, e.value, e.detail) for e in found.errors]


def normalize(rt: ResourceType, obj: dict[str, Any], schemas: Schemas) -> None:
    """The object as the Go types of `schemas` serialize it (`status: {}`,
    `creationTimestamp: null`)."""
    schema.normalize(schemas, schema.for_resource(schemas, rt), obj)
