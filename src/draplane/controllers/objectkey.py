"""`ObjectKey`: the typed work-queue item every controller uses instead of prefixed strings."""

from __future__ import annotations

from typing import NamedTuple

from draplane.api import meta
from draplane.api.meta import Obj


class ObjectKey(NamedTuple):
    """What a controller must sync: the object's kind (`Pod`, `ResourceClaim`...) and name."""

    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, kind: str, obj: Obj) -> ObjectKey:
        return cls(kind, meta.namespace(obj), meta.name(obj))

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"
