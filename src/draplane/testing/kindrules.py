"""A kind's defaulting and validation as the registry runs them, for tests that check the rules
of a kind without a server: the JSON-type check of the decoding step first (its errors alone
when there are any), then the kind's declared rules (`draplane.apiserver.strategies`).

    from draplane.testing import kindrules as validation
    assert validation.validate_create(kinds.PODS, pod) == []
"""

from __future__ import annotations

from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.validation import shape_errors, type_errors
from draplane.apiserver.strategies.table import strategy_for

__all__ = ["default", "type_errors", "validate_create", "validate_status_update", "validate_update"]


def default(rt: ResourceType, obj: Obj) -> None:
    strategy_for(rt).apply_defaults(obj)


def validate_create(rt: ResourceType, obj: Obj) -> list[FieldError]:
    return shape_errors(rt, obj) or strategy_for(rt).validate_create(obj)


def validate_update(rt: ResourceType, obj: Obj, old: Obj) -> list[FieldError]:
    return shape_errors(rt, obj) or strategy_for(rt).validate_main_update(obj, old)


def validate_status_update(rt: ResourceType, obj: Obj, old: Obj) -> list[FieldError]:
    return shape_errors(rt, obj) or strategy_for(rt).validate_status_update(obj, old)
