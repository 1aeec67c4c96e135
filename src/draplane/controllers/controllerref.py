"""Adoption and release of children by controller reference (controller_ref_manager.go).

A child controlled by the owner is kept while the selector matches and released when it no
longer does; an orphan that matches is adopted, after one live read of the owner confirms it
still exists with the same UID and is not being deleted. Both writes are strategic-merge
patches that carry the child's UID, so a replaced child of the same name is never touched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from draplane.api import meta
from draplane.api.errors import StatusError, is_conflict, is_not_found
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.selectors import LabelSelector
from draplane.client.interface import Client


class OwnerChanged(Exception):
    """The owner was replaced or is being deleted: do not adopt."""


def adopt_patch(owner: Obj, child: Obj) -> Obj:
    ref = meta.owner_reference(owner, block_owner_deletion=True)
    return {"metadata": {"ownerReferences": [ref], "uid": meta.uid(child)}}


def release_patch(owner: Obj, child: Obj) -> Obj:
    return {
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": meta.uid(owner)}],
            "uid": meta.uid(child),
        }
    }


async def claim_children(
    client: Client,
    rt: ResourceType,
    owner: Obj,
    selector: LabelSelector,
    children: list[Obj],
    *,
    recheck_owner: Callable[[], Awaitable[Obj]],
) -> list[Obj]:
    """The children `owner` controls after adopting and releasing (ClaimObject)."""
    owner_uid = meta.uid(owner)
    deleting = bool(meta.deletion_timestamp(owner))
    claimed: list[Obj] = []
    checked = False
    for child in children:
        ref = meta.controller_ref(child)
        matches = selector.matches(meta.labels(child))
        if ref is not None:
            if ref.get("uid") != owner_uid:
                continue
            if matches:
                claimed.append(child)
            elif not deleting:
                await _patch(client, rt, child, release_patch(owner, child))
            continue
        if deleting or not matches or meta.deletion_timestamp(child):
            continue
        if meta.namespace(child) != meta.namespace(owner):
            continue
        if not checked:
            fresh = await recheck_owner()
            if meta.uid(fresh) != owner_uid:
                raise OwnerChanged(f"original {meta.key(owner)} is gone: got uid {meta.uid(fresh)}")
            if meta.deletion_timestamp(fresh):
                raise OwnerChanged(f"{meta.key(owner)} has just been deleted")
            checked = True
        adopted = await _patch(client, rt, child, adopt_patch(owner, child))
        if adopted is not None:
            claimed.append(adopted)
    return claimed


async def _patch(client: Client, rt: ResourceType, child: Obj, body: Obj) -> Obj | None:
    """The patched child, or None when it is gone or was replaced (UID mismatch)."""
    try:
        return await client.patch(
            rt, meta.name(child), body, meta.namespace(child), patch_type="strategic"
        )
    except StatusError as err:
        if is_not_found(err) or is_conflict(err):
            return None
        raise
