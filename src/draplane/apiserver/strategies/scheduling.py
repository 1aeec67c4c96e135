"""Declarations of the scheduling.k8s.io/v1 kinds: PriorityClass (pkg/registry/scheduling).

At most one class may be the global default: a write of a second `globalDefault: true` class is
refused as the Priority admission plugin refuses it (403). The two system classes are written
at start by the registry (`SYSTEM_PRIORITY_CLASSES`), as kube-apiserver's post-start hook does.
"""

from __future__ import annotations

from draplane.api import errors, kinds, meta
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.validation import scheduling
from draplane.apiserver.printing import AGE, NAME, Printer, with_age
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.strategies.context import ServerContext


def _cells(obj: Obj) -> list[object]:
    value = obj.get("value")
    return [
        meta.name(obj),
        value if isinstance(value, int) else 0,
        obj.get("globalDefault") is True,
        str(obj.get("preemptionPolicy") or ""),
    ]


PRINTER = Printer(
    [
        NAME,
        ("Value", "integer", 0, "The integer priority of pods of this class."),
        ("Global-Default", "boolean", 0, "Whether this class is the global default."),
        AGE,
        ("PreemptionPolicy", "string", 0, "Whether pods of this class preempt others."),
    ],
    with_age(_cells, age_at=3),
)


async def _one_global_default(
    server: ServerContext, user: UserInfo, obj: Obj, old: Obj | None
) -> None:
    """Only one PriorityClass may have `globalDefault: true` (the Priority admission plugin)."""
    if obj.get("globalDefault") is not True:
        return
    rt = kinds.PRIORITY_CLASSES
    name = meta.name(obj)
    items, _ = await server.storage.list(rt.key)
    for other in items:
        if other.get("globalDefault") is True and meta.name(other) != name:
            raise errors.forbidden_message(
                f'{rt.group_resource} "{name}" is forbidden: PriorityClass {name} is marked as '
                f"globalDefault, but another PriorityClass {meta.name(other)} exists with "
                "globalDefault=true",
                rt,
                name,
            )


STRATEGIES = (
    ResourceStrategy(
        kinds.PRIORITY_CLASSES,
        validate=scheduling.validate_priority_class,
        validate_update=scheduling.validate_priority_class_update,
        defaults=scheduling.default_priority_class,
        printer=PRINTER,
        check_write=_one_global_default,
    ),
)
