"""`MemoryStorage`: the Storage protocol in process memory, every write committed immediately.

For tests and for `--store memory`; nothing survives the process.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from draplane.api import errors
from draplane.api.meta import Obj
from draplane.storage._engine import DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_SIZE, Engine
from draplane.storage._writes import object_key, plan_create, plan_delete, plan_update
from draplane.storage.interface import Event, Storage, Watch


class MemoryStorage:
    def __init__(
        self,
        *,
        history_size: int = DEFAULT_HISTORY_SIZE,
        history_bytes: int = DEFAULT_HISTORY_BYTES,
    ) -> None:
        self._engine = Engine(history_size=history_size, history_bytes=history_bytes)
        self._closed = False

    @property
    def revision(self) -> int:
        return self._engine.revision

    @property
    def oldest_revision(self) -> int:
        return self._engine.oldest_revision

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        self._closed = True
        self._engine.end_watches()

    async def check(self) -> None:
        if self._closed:
            raise errors.internal("storage is closed")

    async def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        return self._engine.get(resource, namespace, name)

    async def list(self, resource: str, namespace: str | None = None) -> tuple[list[Obj], int]:
        return self._engine.list(resource, namespace), self._engine.revision

    async def list_at(
        self, resource: str, namespace: str | None, revision: int
    ) -> builtins.list[Obj]:
        return self._engine.list_at(resource, namespace, revision)

    async def create(self, resource: str, obj: Obj) -> Obj:
        _, namespace, name = object_key(resource, obj)
        event = plan_create(
            resource=resource,
            obj=obj,
            current=self._engine.get(resource, namespace, name),
            revision=self._next_revision(),
        )
        return self._commit(event)

    async def update(self, resource: str, obj: Obj, *, expected_rv: int | None = None) -> Obj:
        _, namespace, name = object_key(resource, obj)
        event = plan_update(
            resource=resource,
            obj=obj,
            current=self._engine.get(resource, namespace, name),
            expected_rv=expected_rv,
            revision=self._next_revision(),
        )
        return self._commit(event)

    async def delete(
        self, resource: str, namespace: str, name: str, *, expected_rv: int | None = None
    ) -> Obj:
        event = plan_delete(
            resource=resource,
            name=name,
            current=self._engine.get(resource, namespace, name),
            expected_rv=expected_rv,
            revision=self._next_revision(),
        )
        return self._commit(event)

    def watch(self, from_revision: int) -> Watch:
        if self._closed:
            raise errors.internal("storage is closed")
        return self._engine.watch(from_revision)

    def _next_revision(self) -> int:
        if self._closed:
            raise errors.internal("storage is closed")
        return self._engine.revision + 1

    def _commit(self, event: Event) -> Obj:
        self._engine.apply((event,))
        return event.object


if TYPE_CHECKING:
    _conforms: Storage = MemoryStorage()
