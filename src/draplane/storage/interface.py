"""The `Storage` protocol: versioned objects under one global revision, plus a change stream.

Semantics (like etcd as kube-apiserver uses it):
- One global, strictly increasing revision. Every write gets the next revision; the stored
  object's `metadata.resourceVersion` is that revision as a string.
- Objects are addressed by (resource key, namespace, name); the resource key is
  `ResourceType.key` (`pods`, `resource.k8s.io/resourceclaims`); namespace is "" when
  cluster-scoped.
- The store raises its own errors (`draplane.storage.errors`): `create` of an existing key
  `KeyExists`; `update`/`delete` with `expected_rv` different from the stored revision
  `RevisionConflict`; a missing key `KeyNotFound`. The API server maps them to Status errors.
- A write returns only once it is durable (for a persistent backend: committed to disk).
  Events are published in revision order, only after the write is durable.
- `list_at(revision)` serves consistent snapshots (`resourceVersionMatch=Exact`, `continue`)
  from the retained history, like etcd's MVCC reads before compaction.
- `watch(from_revision)` yields every event with revision > from_revision, across all
  resources, in revision order. A revision older than the retained history raises
  `RevisionTooOld` (410 Expired, "too old resource version: X (Y)", once mapped).
- The retained history is bounded both in events and in bytes (each event counts the encoded
  size of its object, `Event.size`).
- A revision is never handed out twice, across restarts too: a persistent backend refuses to
  start (`StoreError`) when its files show that committed writes were lost.
- A write that fails because the disk is full raises 507 InsufficientStorage, and `check()`
  then fails until the store can write again.
- Objects passed in become owned by the store; objects returned are shared and read-only.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol

from draplane.api.meta import Obj

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True, slots=True)
class Event:
    type: EventType
    resource: str
    """Resource key (`ResourceType.key`)."""
    object: Obj
    """The new state; for DELETED, the last state with the deletion's revision."""
    revision: int
    prev: Obj | None = None
    """The state before this event (None for ADDED), for selector transitions in watches."""
    size: int = 0
    """The encoded (JSON) size of `object` in bytes, for buffers bounded in bytes."""


class StoreError(Exception):
    """The store cannot be opened: its files are missing, damaged or unwritable. The message
    says what happened and what to do (one line, for the command line)."""


class Watch(Protocol):
    def __aiter__(self) -> AsyncIterator[Event]: ...

    async def close(self) -> None:
        """Stop the stream; iteration then ends."""
        ...


class Storage(Protocol):
    @property
    def revision(self) -> int:
        """The revision of the latest durable write (0 for an empty store)."""
        ...

    @property
    def oldest_revision(self) -> int:
        """Watches may start from any revision >= this value - 1."""
        ...

    async def start(self) -> None:
        """Open / load the backend. Must be called before anything else."""
        ...

    async def close(self) -> None: ...

    async def check(self) -> None:
        """Raise a StatusError when the store cannot serve writes now (closed, disk full)."""
        ...

    async def get(self, resource: str, namespace: str, name: str) -> Obj | None: ...

    async def list(self, resource: str, namespace: str | None = None) -> tuple[list[Obj], int]:
        """All objects of `resource` (in one namespace, or all when None), sorted by
        (namespace, name), and the revision they are consistent with."""
        ...

    async def list_at(
        self, resource: str, namespace: str | None, revision: int
    ) -> builtins.list[Obj]:
        """Like `list`, but the objects as they were at `revision` (<= the current revision);
        410 Expired when the history back to that revision is no longer retained."""
        ...

    async def create(self, resource: str, obj: Obj) -> Obj: ...

    async def update(self, resource: str, obj: Obj, *, expected_rv: int | None = None) -> Obj:
        """Replace the object at obj's (namespace, name). `expected_rv` None = unconditional."""
        ...

    async def delete(
        self, resource: str, namespace: str, name: str, *, expected_rv: int | None = None
    ) -> Obj:
        """Remove the object; returns its last state carrying the deletion's revision."""
        ...

    def watch(self, from_revision: int) -> Watch:
        """Events after `from_revision`; raises 410 Expired when that history is gone."""
        ...
