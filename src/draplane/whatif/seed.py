"""Writing a forked state into a fresh API server, through the API as an admin: each object is
created without its server-assigned metadata (uid, resourceVersion, timestamps), owners before
what they own, and its status (Node capacity, Pod binding and claim statuses, ResourceClaim
allocation and reservedFor) written through the `status` subresource. UIDs the new server
assigns replace the old ones in ownerReferences and reservedFor, so the garbage collector and
the claim controller see the same ownership as in the original cluster.
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors, meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.explain import Snapshot
from draplane.whatif.state import SERVER_CREATED, state_objects

_SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "selfLink",
    "managedFields",
)


def fresh(obj: Obj, uids: dict[str, str]) -> Obj:
    """A copy of `obj` to create: server metadata and status dropped, owner uids mapped
    (owners not in `uids` are dropped: the garbage collector would delete the dependent)."""
    body = meta.deep_copy(obj)
    body.pop("status", None)
    md = body.setdefault("metadata", {})
    for key in _SERVER_METADATA:
        md.pop(key, None)
    owners = []
    for ref in md.get("ownerReferences") or ():
        uid = uids.get(str(ref.get("uid") or ""))
        if uid:
            owners.append({**ref, "uid": uid})
    if owners:
        md["ownerReferences"] = owners
    else:
        md.pop("ownerReferences", None)
    return body


def _mapped_status(status: Any, uids: dict[str, str]) -> Any:
    """`status` with every `reservedFor` entry's uid mapped (entries of unknown uids dropped)."""
    if not isinstance(status, dict) or "reservedFor" not in status:
        return status
    reserved = []
    for ref in status.get("reservedFor") or ():
        uid = uids.get(str(ref.get("uid") or ""))
        if uid:
            reserved.append({**ref, "uid": uid})
    return {**status, "reservedFor": reserved}


async def create_object(client: Client, rt: ResourceType, obj: Obj, uids: dict[str, str]) -> Obj:
    """Create `obj` (then its status, when the kind has a status subresource); record its new
    uid in `uids`."""
    created = await client.create(rt, fresh(obj, uids), meta.namespace(obj))
    uids[meta.uid(obj)] = meta.uid(created)
    status = obj.get("status")
    if status and "status" in rt.subresources:
        body = {**created, "status": _mapped_status(status, uids)}
        created = await client.update(rt, body, subresource="status")
    return created


async def seed_state(client: Client, state: Snapshot) -> dict[str, str]:
    """Create every object of `state` (objects being deleted are left out); old uid -> new."""
    uids: dict[str, str] = {}
    for rt, obj in state_objects(state):
        if meta.deletion_timestamp(obj):
            continue
        try:
            await create_object(client, rt, obj, uids)
        except errors.StatusError as err:
            if not (rt in SERVER_CREATED and err.code == 409):
                raise
    return uids
