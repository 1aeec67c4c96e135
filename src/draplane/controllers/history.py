"""ControllerRevisions: the template history of StatefulSets and DaemonSets (and of any
controller that keeps one), as pkg/controller/history.

A revision's `data` is the strategic-merge patch `{"spec":{"template":{...,"$patch":"replace"}}}`;
its name is `<parent>-<hash>` with the hash of 0.2 (32-bit FNV-1 of the data and the collision
count, in decimal, mapped onto the safe alphabet); labels are the template's plus
`controller-revision-hash=<hash>`, annotations the parent's, and a controller reference points at
the parent. `History` creates, bumps and trims them through one client.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from draplane.api import meta
from draplane.api.errors import StatusError, is_already_exists, is_not_found
from draplane.api.kinds import CONTROLLER_REVISIONS
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.klog import V2

log = logging.getLogger(__name__)

CONTROLLER_REVISION_HASH = "controller-revision-hash"
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
NAME_PREFIX_LIMIT = 223
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32(data: bytes) -> int:
    """32-bit FNV-1 (multiply, then xor), as Go's hash/fnv New32."""
    value = _FNV32_OFFSET
    for byte in data:
        value = (value * _FNV32_PRIME) & 0xFFFFFFFF
        value ^= byte
    return value


def safe_encode(text: str) -> str:
    """apimachinery's rand.SafeEncodeString: each character onto the 27-letter alphabet."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def hash_data(data: Obj, collision_count: int | None) -> str:
    """The name hash of revision `data` (and of a pod template) with `collision_count`."""
    raw = canonical_json(data)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode(str(fnv32(raw)))


def revision_name(prefix: str, hash_: str) -> str:
    return f"{prefix[:NAME_PREFIX_LIMIT]}-{hash_}"


def template_data(template: Obj) -> Obj:
    """The revision data for a pod template (what StatefulSets and DaemonSets store)."""
    return {"spec": {"template": {**meta.deep_copy(template), "$patch": "replace"}}}


def template_of(revision: Obj) -> Obj:
    """The pod template a revision recorded with `template_data`."""
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return meta.deep_copy(template)


def revision_number(revision: Obj) -> int:
    return int(revision.get("revision") or 0)


def sort_revisions(revisions: Iterable[Obj]) -> list[Obj]:
    """Oldest first: by `revision`, then creation time, then name."""
    return sorted(
        revisions,
        key=lambda r: (
            revision_number(r),
            meta.metadata(r).get("creationTimestamp") or "",
            meta.name(r),
        ),
    )


def next_revision(revisions: Sequence[Obj]) -> int:
    return max((revision_number(r) for r in revisions), default=0) + 1


def equal_revisions(a: Obj, b: Obj) -> bool:
    return canonical_json(a.get("data")) == canonical_json(b.get("data"))


def revision_hash(revision: Obj) -> str:
    return meta.labels(revision).get(CONTROLLER_REVISION_HASH, "")


def new_revision(
    parent: Obj, data: Obj, *, revision: int, collision_count: int | None, labels: dict[str, str]
) -> Obj:
    """An unsaved revision of `parent` (a StatefulSet, DaemonSet...) holding `data`."""
    hash_ = hash_data(data, collision_count)
    md: Obj = {
        "name": revision_name(meta.name(parent), hash_),
        "namespace": meta.namespace(parent),
        "labels": {**labels, CONTROLLER_REVISION_HASH: hash_},
        "ownerReferences": [
            meta.owner_reference(parent, controller=True, block_owner_deletion=True)
        ],
    }
    if meta.annotations(parent):
        md["annotations"] = dict(meta.annotations(parent))
    return {
        "apiVersion": CONTROLLER_REVISIONS.api_version,
        "kind": CONTROLLER_REVISIONS.kind,
        "metadata": md,
        "data": meta.deep_copy(data),
        "revision": revision,
    }


class History:
    """Writes a parent's ControllerRevisions through `client` (the controller's identity)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def create(
        self, parent: Obj, data: Obj, *, revision: int, collision_count: int, labels: dict[str, str]
    ) -> tuple[Obj, int]:
        """Create the revision; a name taken by other data bumps the collision count."""
        while True:
            body = new_revision(
                parent, data, revision=revision, collision_count=collision_count, labels=labels
            )
            try:
                created = await self._client.create(
                    CONTROLLER_REVISIONS, body, meta.namespace(parent)
                )
                return created, collision_count
            except StatusError as err:
                if not is_already_exists(err):
                    raise
            existing = await self._client.get(
                CONTROLLER_REVISIONS, meta.name(body), meta.namespace(parent)
            )
            if equal_revisions(existing, body):
                return existing, collision_count
            collision_count += 1

    async def bump(self, revision: Obj, number: int) -> Obj:
        """Give an older revision equal to the template the newest number (a rollback)."""
        if revision_number(revision) == number:
            return revision
        updated = meta.deep_copy(revision)
        updated["revision"] = number
        return await self._client.update(CONTROLLER_REVISIONS, updated)

    async def update_revision(
        self,
        parent: Obj,
        revisions: Sequence[Obj],
        data: Obj,
        *,
        collision_count: int,
        labels: dict[str, str],
    ) -> tuple[Obj, int]:
        """The revision for `data` (StatefulSet getStatefulSetRevisions, DaemonSet
        constructHistory): the newest if equal, else an equal older one renumbered, else a new
        one. Returns it and the collision count to record in the parent's status."""
        ordered = sort_revisions(revisions)
        number = next_revision(ordered)
        probe = {"data": data}
        equal = [r for r in ordered if equal_revisions(r, probe)]
        if equal and ordered and meta.name(equal[-1]) == meta.name(ordered[-1]):
            return ordered[-1], collision_count
        if equal:
            return await self.bump(equal[-1], number), collision_count
        return await self.create(
            parent, data, revision=number, collision_count=collision_count, labels=labels
        )

    async def truncate(self, revisions: Sequence[Obj], live: set[str], limit: int) -> list[str]:
        """Delete the oldest revisions not named in `live` beyond `limit`; their names."""
        history = [r for r in sort_revisions(revisions) if meta.name(r) not in live]
        doomed = history[: max(len(history) - max(limit, 0), 0)]
        for revision in doomed:
            log.log(V2, "Deleting ControllerRevision %s", meta.key(revision))
            try:
                await self._client.delete(
                    CONTROLLER_REVISIONS,
                    meta.name(revision),
                    meta.namespace(revision),
                    preconditions={"uid": meta.uid(revision)},
                )
            except StatusError as err:
                if not is_not_found(err):
                    raise
        return [meta.name(r) for r in doomed]
