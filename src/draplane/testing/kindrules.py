"""A kind's defaulting and validation as the registry runs them, for tests that check the rules
of a kind without a server: the JSON-type check of the decoding step first (its errors alone
when there are any), then the kind's declared rules (`draplane.apiserver.strategies`), over the
base Go types (`schema.schemas_for()`: 1.28's PodResourceClaim) unless `schemas` are passed.

    from draplane.testing import kindrules as validation
    assert validation.validate_create(kinds.PODS, pod) == []
"""

from __future__ import annotations

from draplane.api import validation
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.schema import Schemas, schemas_for
from draplane.api.validation import shape_errors
from draplane.apiserver.strategies.table import strategy_for

__all__ = ["default", "type_errors", "validate_create", "validate_status_update", "validate_update"]


def default(rt: ResourceType, obj: Obj) -> None:
    strategy_for(rt).apply_defaults(obj)


def type_errors(rt: ResourceType, obj: Obj, schemas: Schemas | None = None) -> list[FieldError]:
    return validation.type_errors(rt, obj, schemas or schemas_for())


def validate_create(rt: ResourceType, obj: Obj, schemas: Schemas | None = None) -> list[FieldError]:
    schemas = schemas or schemas_for()
    return shape_errors(rt, obj, schemas) or strategy_for(rt).validate_create(obj, schemas)


def validate_update(
    rt: ResourceType, obj: Obj, old: Obj, schemas: Schemas | None = None
) -> list[FieldError]:
    schemas = schemas or schemas_for()
    errs = shape_errors(rt, obj, schemas)
    return errs or strategy_for(rt).validate_main_update(obj, old, schemas)


def validate_status_update(
    rt: ResourceType, obj: Obj, old: Obj, schemas: Schemas | None = None
) -> list[FieldError]:
    schemas = schemas or schemas_for()
    return shape_errors(rt, obj, schemas) or strategy_for(rt).validate_status_update(obj, old)
