"""Defaulting and validation of the served kinds: one module per API group, whose functions a
kind's declaration (`draplane.apiserver.strategies`) names.

A kind's create, update and `status` validation return FieldErrors with Kubernetes' field paths
(empty = valid) and never raise on malformed input: the registry first checks every field's
JSON type (`require_field_types`, `fieldtypes`: the decoding step of kube-apiserver) and reports
only those errors when there are any, so the rules per kind read well-typed fields.
"""

from __future__ import annotations

from collections.abc import Callable

from draplane.api import errors
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation.fieldtypes import decode_fields, normalize, type_errors
from draplane.api.validation.objectmeta import type_invalid

__all__ = [
    "CreateFn",
    "TypedCreateFn",
    "TypedUpdateFn",
    "UpdateFn",
    "normalize",
    "require_field_types",
    "shape_errors",
    "type_errors",
]


CreateFn = Callable[[Obj], list[FieldError]]
"""A kind's create validation, over an object whose field types were checked."""
UpdateFn = Callable[[Obj, Obj], list[FieldError]]
"""A kind's update (or `status` update) validation: the new object and the stored one."""
TypedCreateFn = Callable[[Obj, Schemas], list[FieldError]]
"""Create validation of a kind whose rules follow the served Go types (`Schemas`): pods and the
kinds with a pod template, whose `spec.resourceClaims` are the served PodResourceClaim."""
TypedUpdateFn = Callable[[Obj, Obj, Schemas], list[FieldError]]
"""Update validation of such a kind."""


def shape_errors(rt: ResourceType, obj: Obj, schemas: Schemas) -> list[FieldError]:
    if not isinstance(obj, dict):
        return [type_invalid("", obj, "must be an object")]
    if not isinstance(obj.get("metadata"), dict):
        return [type_invalid("metadata", obj.get("metadata"), "must be an object")]
    return type_errors(rt, obj, schemas)


def require_field_types(
    rt: ResourceType,
    obj: Obj,
    schemas: Schemas,
    *,
    mode: str = "",
    duplicates: tuple[str, ...] = (),
    prune: bool = True,
) -> None:
    """The decoding step of a write, where kube-apiserver decodes the body, before defaulting
    and the strategies read it: unknown and duplicate fields per `fieldValidation` `mode`
    (400 under Strict, dropped otherwise), then 422 Invalid when a field has the wrong JSON
    type (`fieldtypes`)."""
    causes = decode_fields(rt, obj, schemas, mode=mode, duplicates=duplicates, prune=prune)
    if causes:
        md = obj.get("metadata") if isinstance(obj, dict) else None
        name = md.get("name") if isinstance(md, dict) else None
        raise errors.invalid_object(rt.kind, name if isinstance(name, str) else "", causes, rt)
