"""What every workload controller shares (spec/workloads.md 0.2): pods from templates, the pod
predicates, adoption and release of children, expectations, and `OwnerQueue`, the handlers that
turn child events into the owner's `ObjectKey`.

The controllers themselves (statefulset.py, daemonset.py) run the one worker loop
(`draplane.client.workers.run_workers`) over a `RateLimitingQueue[ObjectKey]`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from draplane.api import meta
from draplane.api.errors import StatusError, is_conflict, is_not_found
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.selectors import LabelSelector
from draplane.client.informer import DeletedFinalStateUnknown, Informer, unwrap
from draplane.client.interface import Client
from draplane.client.lister import Lister
from draplane.client.workqueue import RateLimitingQueue
from draplane.clock import Clock, parse_time
from draplane.controllers.objectkey import ObjectKey
from draplane.klog import V2

log = logging.getLogger(__name__)

EXPECTATIONS_TIMEOUT = 300.0
NAMESPACE_TERMINATING = "NamespaceTerminating"


# -- pods from templates ---------------------------------------------------------------------


def controller_uid_of(kind: str, api_version: str) -> Callable[[Obj], list[str]]:
    """An informer index function: the controller's UID when that controller is a `kind` of
    `api_version` (the Job controller's pods, the CronJob controller's Jobs), else nothing."""

    def index(obj: Obj) -> list[str]:
        ref = meta.controller_ref(obj)
        if ref is None or ref.get("kind") != kind or ref.get("apiVersion") != api_version:
            return []
        return [str(ref.get("uid"))]

    return index


def controller_reference(owner: Obj) -> Obj:
    return meta.owner_reference(owner, controller=True, block_owner_deletion=True)


def pod_from_template(template: Obj, owner: Obj) -> Obj:
    """controller.GetPodFromTemplate: labels, annotations, finalizers and spec of the template,
    one controller reference to `owner`."""
    tmd = template.get("metadata") or {}
    md: Obj = {"namespace": meta.namespace(owner), "ownerReferences": [controller_reference(owner)]}
    for field_name in ("labels", "annotations"):
        if tmd.get(field_name):
            md[field_name] = dict(tmd[field_name])
    if tmd.get("finalizers"):
        md["finalizers"] = list(tmd["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": meta.deep_copy(template.get("spec") or {}),
    }


# -- predicates ------------------------------------------------------------------------------


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _ready_condition(pod: Obj) -> Obj | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return dict(cond)
    return None


def is_ready(pod: Obj) -> bool:
    cond = _ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def is_available(pod: Obj, min_ready_seconds: int, now: datetime) -> bool:
    """Ready, and for `min_ready_seconds` since the Ready condition last changed."""
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = (_ready_condition(pod) or {}).get("lastTransitionTime")
    if not since:
        return False
    return parse_time(str(since)) + timedelta(seconds=min_ready_seconds) <= now


def available_in(pod: Obj, min_ready_seconds: int, now: datetime) -> float | None:
    """Seconds until a ready pod becomes available (None when not ready or already)."""
    if min_ready_seconds <= 0 or not is_ready(pod):
        return None
    since = (_ready_condition(pod) or {}).get("lastTransitionTime")
    if not since:
        return None
    remaining = (
        parse_time(str(since)) + timedelta(seconds=min_ready_seconds) - now
    ).total_seconds()
    return remaining if remaining > 0 else None


def is_terminal(pod: Obj) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_terminating(pod: Obj) -> bool:
    return bool(meta.deletion_timestamp(pod)) and not is_terminal(pod)


def is_active(pod: Obj) -> bool:
    return not is_terminal(pod) and not meta.deletion_timestamp(pod)


def selector_of(owner: Obj) -> LabelSelector:
    """The owner's `spec.selector`; a malformed one selects nothing."""
    try:
        return LabelSelector.from_label_selector((owner.get("spec") or {}).get("selector"))
    except StatusError:
        return LabelSelector.nothing()


def creation_order(pod: Obj) -> tuple[str, str]:
    return (str(meta.metadata(pod).get("creationTimestamp") or ""), meta.name(pod))


# -- adopt and release -----------------------------------------------------------------------


async def claim_children(
    client: Client, rt: ResourceType, owner: Obj, children: Iterable[Obj]
) -> list[Obj]:
    """ControllerRefManager.Claim: the children `owner` controls after adopting matching orphans
    and releasing controlled children its selector no longer matches."""
    selector = selector_of(owner)
    owner_uid = meta.uid(owner)
    deleting = bool(meta.deletion_timestamp(owner))
    claimed: list[Obj] = []
    for child in children:
        if meta.namespace(child) != meta.namespace(owner):
            continue
        ref = meta.controller_ref(child)
        matches = selector.matches(meta.labels(child))
        if ref is not None:
            if ref.get("uid") != owner_uid:
                continue
            if matches or deleting:
                claimed.append(child)
            else:
                await _patch_owner(client, rt, child, {"$patch": "delete", "uid": owner_uid})
            continue
        if deleting or not matches or meta.deletion_timestamp(child):
            continue
        adopted = await _patch_owner(client, rt, child, controller_reference(owner))
        if adopted is not None:
            claimed.append(adopted)
    return claimed


async def _patch_owner(client: Client, rt: ResourceType, child: Obj, entry: Obj) -> Obj | None:
    patch = {"metadata": {"ownerReferences": [entry], "uid": meta.uid(child)}}
    action = "Releasing" if entry.get("$patch") == "delete" else "Adopting"
    log.log(V2, "%s %s %s", action, rt.kind, meta.key(child))
    try:
        return await client.patch(
            rt, meta.name(child), patch, meta.namespace(child), patch_type="strategic"
        )
    except StatusError as err:
        if is_not_found(err) or is_conflict(err):
            return None  # gone, or replaced by another object of that name
        raise


def is_namespace_terminating(err: StatusError) -> bool:
    causes = err.details.get("causes") or []
    return any(c.get("reason") == NAMESPACE_TERMINATING for c in causes)


# -- expectations ----------------------------------------------------------------------------


@dataclass
class _Expected:
    creates: int = 0
    deletes: set[str] = field(default_factory=set)
    since: float = 0.0


class Expectations:
    """Creates and deletes issued per owner key, confirmed by watch events; an owner with
    unconfirmed ones is not managed again (so a stale cache never acts twice). Records older
    than 5 minutes count as satisfied."""

    def __init__(self, clock: Clock, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock
        self._timeout = timeout
        self._records: dict[ObjectKey, _Expected] = {}

    def expect(self, key: ObjectKey, *, creates: int = 0, deletes: Iterable[str] = ()) -> None:
        record = self._records.setdefault(key, _Expected())
        record.creates += creates
        record.deletes.update(deletes)
        record.since = self._clock.monotonic()

    def created(self, key: ObjectKey, count: int = 1) -> None:
        record = self._records.get(key)
        if record is not None:
            record.creates = max(record.creates - count, 0)

    def deleted(self, key: ObjectKey, child_key: str) -> None:
        record = self._records.get(key)
        if record is not None:
            record.deletes.discard(child_key)

    def satisfied(self, key: ObjectKey) -> bool:
        record = self._records.get(key)
        if record is None or (record.creates == 0 and not record.deletes):
            return True
        return self._clock.monotonic() - record.since > self._timeout

    def forget(self, key: ObjectKey) -> None:
        self._records.pop(key, None)


# -- event handlers --------------------------------------------------------------------------


@dataclass
class OwnerQueue:
    """Maps child events (pods, ControllerRevisions) onto the owner's key, as the workload
    controllers' addPod/updatePod/deletePod: the controller's owner if it is one of ours,
    otherwise (orphans) every owner in the namespace whose selector matches."""

    kind: str
    api_version: str
    owners: Lister
    queue: RateLimitingQueue[ObjectKey]
    expectations: Expectations | None = None

    def owner_of(self, child: Obj) -> Obj | None:
        ref = meta.controller_ref(child)
        if ref is None or ref.get("kind") != self.kind or ref.get("apiVersion") != self.api_version:
            return None
        owner = self.owners.get(str(ref.get("name")), meta.namespace(child))
        if owner is None or meta.uid(owner) != ref.get("uid"):
            return None
        return owner

    def key(self, owner: Obj) -> ObjectKey:
        return ObjectKey.of(self.kind, owner)

    def enqueue(self, owner: Obj) -> None:
        self.queue.add(self.key(owner))

    def _orphan(self, child: Obj) -> None:
        if meta.deletion_timestamp(child):
            return
        labels = meta.labels(child)
        for owner in self.owners.list(meta.namespace(child)):
            if selector_of(owner).matches(labels):
                self.enqueue(owner)

    def on_add(self, child: Obj) -> None:
        owner = self.owner_of(child)
        if owner is not None:
            if self.expectations is not None:
                self.expectations.created(self.key(owner))
            self.enqueue(owner)
        elif meta.controller_ref(child) is None:
            self._orphan(child)

    def on_update(self, old: Obj, new: Obj) -> None:
        if meta.resource_version(old) == meta.resource_version(new):
            return
        owner = self.owner_of(new)
        if (
            owner is not None
            and self.expectations is not None
            and meta.deletion_timestamp(new)
            and not meta.deletion_timestamp(old)
        ):
            self.expectations.deleted(self.key(owner), meta.key(new))
        old_owner = self.owner_of(old)
        if old_owner is not None and (owner is None or meta.uid(owner) != meta.uid(old_owner)):
            self.enqueue(old_owner)
        if owner is not None:
            self.enqueue(owner)
        elif meta.controller_ref(new) is None:
            self._orphan(new)

    def on_delete(self, deleted: Obj | DeletedFinalStateUnknown) -> None:
        child = unwrap(deleted)
        owner = self.owner_of(child)
        if owner is None:
            return
        if self.expectations is not None:
            self.expectations.deleted(self.key(owner), meta.key(child))
        self.enqueue(owner)

    def watch(self, informer: Informer) -> None:
        informer.add_handler(on_add=self.on_add, on_update=self.on_update, on_delete=self.on_delete)
