"""The ReplicaSet controller (pkg/controller/replicaset): keeps `spec.replicas` active pods.

Handlers only enqueue the owning ReplicaSet (or every matching one, for an orphan) and confirm
expectations; `sync(key)` claims pods (adopting and releasing), creates pods in slow-start
batches or deletes the lowest-ranked ones, and writes status. While creates or deletes it issued
are not yet in the informer, it does not manage again, so it never acts twice on a stale cache.
"""

from __future__ import annotations

import asyncio
import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_conflict, is_not_found
from draplane.api.kinds import PODS, REPLICA_SETS
from draplane.api.meta import Obj
from draplane.api.selectors import LabelSelector
from draplane.client.informer import Informer, unwrap
from draplane.client.lister import Lister
from draplane.controllers.context import ControllerContext
from draplane.controllers.controller_utils import (
    Expectations,
    is_pod_active,
    is_pod_ready,
    pod_from_template,
    slow_start_batch,
)
from draplane.controllers.controllerref import claim_children
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.controllers.replicaset_util import (
    BURST_REPLICAS,
    pods_to_delete,
    replica_set_status,
)

log = logging.getLogger(__name__)

QUEUE_NAME = "replicaset"
WORKERS = 5
REPLICA_SET = "ReplicaSet"
CONTROLLER_UID_INDEX = "controller-uid"


POD_UPDATE_DELAY = 1.0
"""Seconds a pod status change (or an add while more creates are expected) waits before it
syncs its ReplicaSet, so that a burst of changes costs one sync (docs/fidelity.md)."""


def controller_uid_index(obj: Obj) -> list[str]:
    """The controller's UID, or `orphan/<namespace>` for an object without a controller."""
    ref = meta.controller_ref(obj)
    if ref and ref.get("uid"):
        return [str(ref["uid"])]
    return [orphan_key(meta.namespace(obj))]


def orphan_key(namespace: str) -> str:
    return f"orphan/{namespace}"


def candidates(lister: Lister, owner: Obj) -> list[Obj]:
    """What an owner may claim: its own children and the namespace's orphans (children of
    other controllers are ignored by the claim anyway)."""
    return [
        *lister.by_index(CONTROLLER_UID_INDEX, meta.uid(owner)),
        *lister.by_index(CONTROLLER_UID_INDEX, orphan_key(meta.namespace(owner))),
    ]


def _is_namespace_terminating(err: Exception) -> bool:
    if not isinstance(err, StatusError):
        return False
    causes = (err.details or {}).get("causes") or []
    return any(c.get("reason") == "NamespaceTerminating" for c in causes)


class ManageError(Exception):
    """Manage failed: `reason` is the ReplicaFailure reason, `error` the first failure."""

    def __init__(self, reason: str, err: Exception) -> None:
        super().__init__(str(err))
        self.reason = reason
        self.error = err


class ReplicaSetController(QueueController):
    NAME = "replicaset-controller"
    QUEUE_NAME = QUEUE_NAME

    def __init__(
        self,
        ctx: ControllerContext,
        *,
        burst_replicas: int = BURST_REPLICAS,
    ) -> None:
        super().__init__(ctx)
        self._burst = burst_replicas
        self._rs = ctx.informers.informer(REPLICA_SETS)
        self._pods = ctx.informers.informer(
            PODS, indexers={CONTROLLER_UID_INDEX: controller_uid_index}
        )
        self.expectations = Expectations(self.clock.monotonic)
        self._rs.add_handler(
            on_add=self._enqueue,
            on_update=self._on_rs_update,
            on_delete=lambda rs: self._on_rs_delete(unwrap(rs)),
        )
        self._pods.add_handler(
            on_add=self._on_pod_add,
            on_update=self._on_pod_update,
            on_delete=lambda pod: self._on_pod_delete(unwrap(pod)),
        )

    def informers(self) -> tuple[Informer, ...]:
        return (self._rs, self._pods)

    # -- handlers -----------------------------------------------------------------------------

    def _enqueue(self, rs: Obj) -> None:
        self.queue.add(ObjectKey.of(REPLICA_SET, rs))

    def _on_rs_update(self, old: Obj, new: Obj) -> None:
        self._enqueue(new)

    def _on_rs_delete(self, rs: Obj) -> None:
        self.expectations.delete(meta.key(rs))
        self._enqueue(rs)

    def _owner(self, pod: Obj, ref: Obj | None) -> Obj | None:
        if ref is None or ref.get("kind") != REPLICA_SET:
            return None
        rs = self._rs.lister.get(str(ref.get("name")), meta.namespace(pod))
        return rs if rs is not None and meta.uid(rs) == ref.get("uid") else None

    def _matching(self, pod: Obj) -> list[Obj]:
        labels = meta.labels(pod)
        return [
            rs
            for rs in self._rs.lister.list(meta.namespace(pod))
            if (sel := (rs.get("spec") or {}).get("selector"))
            and not LabelSelector.from_label_selector(sel).empty()
            and LabelSelector.from_label_selector(sel).matches(labels)
        ]

    def _on_pod_add(self, pod: Obj) -> None:
        if meta.deletion_timestamp(pod):
            self._on_pod_delete(pod)
            return
        ref = meta.controller_ref(pod)
        if ref is not None:
            rs = self._owner(pod, ref)
            if rs is not None:
                self.expectations.creation_observed(meta.key(rs))
                if self.expectations.satisfied(meta.key(rs)):
                    self._enqueue(rs)
                else:  # more of this burst to come: one status sync for them all
                    self.queue.add_after(ObjectKey.of(REPLICA_SET, rs), POD_UPDATE_DELAY)
            return
        for rs in self._matching(pod):
            self._enqueue(rs)

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        if meta.resource_version(old) == meta.resource_version(new):
            return
        labels_changed = meta.labels(old) != meta.labels(new)
        if meta.deletion_timestamp(new) and not meta.deletion_timestamp(old):
            self._on_pod_delete(new)
            if labels_changed:
                self._on_pod_delete(old)
            return
        old_ref, new_ref = meta.controller_ref(old), meta.controller_ref(new)
        ref_changed = (old_ref or {}).get("uid") != (new_ref or {}).get("uid")
        if ref_changed and (old_rs := self._owner(old, old_ref)) is not None:
            self._enqueue(old_rs)
        if new_ref is not None:
            rs = self._owner(new, new_ref)
            if rs is not None:
                if ref_changed or labels_changed:
                    self._enqueue(rs)
                else:
                    self.queue.add_after(ObjectKey.of(REPLICA_SET, rs), POD_UPDATE_DELAY)
                min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
                if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(new):
                    self.queue.add_after(ObjectKey.of(REPLICA_SET, rs), min_ready + 1)
            return
        if labels_changed or ref_changed:
            for rs in self._matching(new):
                self._enqueue(rs)

    def _on_pod_delete(self, pod: Obj) -> None:
        rs = self._owner(pod, meta.controller_ref(pod))
        if rs is None:
            return
        self.expectations.deletion_observed(meta.key(rs), meta.key(pod))
        self._enqueue(rs)

    # -- sync ---------------------------------------------------------------------------------

    async def sync(self, key: ObjectKey) -> None:
        rs = self._rs.lister.get(key.name, key.namespace)
        rs_key = f"{key.namespace}/{key.name}"
        if rs is None:
            self.expectations.delete(rs_key)
            return
        needs_sync = self.expectations.satisfied(rs_key)
        spec = rs.get("spec") or {}
        selector = LabelSelector.from_label_selector(spec.get("selector"))
        active = [p for p in candidates(self._pods.lister, rs) if is_pod_active(p)]

        async def recheck() -> Obj:
            return await self.client.get(REPLICA_SETS, key.name, key.namespace)

        pods = await claim_children(self.client, PODS, rs, selector, active, recheck_owner=recheck)
        manage_error: ManageError | None = None
        if needs_sync and not meta.deletion_timestamp(rs):
            try:
                await self._manage(rs, rs_key, pods)
            except ManageError as err:
                manage_error = err
        now = self.clock.now()
        failure = (manage_error.reason, str(manage_error)) if manage_error else None
        status = replica_set_status(rs, pods, failure, now)
        updated = await self._update_status(rs, status)
        min_ready = int(spec.get("minReadySeconds") or 0)
        if (
            manage_error is None
            and min_ready > 0
            and updated.get("readyReplicas")
            == updated.get("replicas")
            != updated.get("availableReplicas", 0)
        ):
            self.queue.add_after(key, float(min_ready))
        if manage_error is not None:
            raise manage_error.error

    async def _manage(self, rs: Obj, rs_key: str, pods: list[Obj]) -> None:
        replicas = int((rs.get("spec") or {}).get("replicas", 1))
        diff = len(pods) - replicas
        if diff < 0:
            count = min(-diff, self._burst)
            self.expectations.expect_creations(rs_key, count)
            log.debug("Too few replicas for %s, need %d, creating %d", rs_key, replicas, count)
            template = (rs.get("spec") or {}).get("template") or {}
            issued = 0

            async def create() -> None:
                nonlocal issued
                issued += 1
                await self._create_pod(rs, template)

            _, err = await slow_start_batch(count, create)
            skipped = count - issued
            if skipped > 0:
                # Creates that were never issued will never be observed.
                self.expectations.creation_observed(rs_key, skipped)
            if err is not None:
                raise ManageError("FailedCreate", err)
        elif diff > 0:
            count = min(diff, self._burst)
            related = self._related_pods(rs)
            victims = pods_to_delete(pods, related, count)
            self.expectations.expect_deletions(rs_key, [meta.key(p) for p in victims])
            results = await asyncio.gather(
                *(self._delete_pod(rs, rs_key, p) for p in victims), return_exceptions=True
            )
            errors = [r for r in results if isinstance(r, Exception)]
            if errors:
                raise ManageError("FailedDelete", errors[0])

    def _related_pods(self, rs: Obj) -> list[Obj]:
        """Active pods of every ReplicaSet with the same controlling owner
        (getIndirectlyRelatedPods)."""
        owner = meta.controller_ref(rs)
        siblings = [rs]
        if owner is not None:
            siblings = [
                other
                for other in self._rs.lister.list(meta.namespace(rs))
                if (meta.controller_ref(other) or {}).get("uid") == owner.get("uid")
            ]
        return [
            p
            for sibling in siblings
            for p in self._pods.lister.by_index(CONTROLLER_UID_INDEX, meta.uid(sibling))
            if is_pod_active(p)
        ]

    async def _create_pod(self, rs: Obj, template: Obj) -> None:
        pod = pod_from_template(template, rs)
        try:
            created = await self.client.create(PODS, pod, meta.namespace(rs))
        except Exception as err:
            # A failed create will never be observed.
            self.expectations.creation_observed(meta.key(rs))
            if _is_namespace_terminating(err):
                return
            self.recorder.event(rs, "Warning", "FailedCreate", f"Error creating: {err}")
            raise
        self.recorder.event(rs, "Normal", "SuccessfulCreate", f"Created pod: {meta.name(created)}")

    async def _delete_pod(self, rs: Obj, rs_key: str, pod: Obj) -> None:
        try:
            await self.client.delete(
                PODS, meta.name(pod), meta.namespace(pod), preconditions={"uid": meta.uid(pod)}
            )
        except StatusError as err:
            self.expectations.deletion_observed(rs_key, meta.key(pod))
            if is_not_found(err) or is_conflict(err):
                return
            self.recorder.event(rs, "Warning", "FailedDelete", f"Error deleting: {err}")
            raise
        self.recorder.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {meta.name(pod)}")

    async def _update_status(self, rs: Obj, status: Obj) -> Obj:
        """PUT replicasets/status when it changed, with one re-read on conflict."""
        if (rs.get("status") or {}) == status:
            return status
        for attempt in range(2):
            body = meta.deep_copy(rs)
            body["status"] = status
            try:
                stored = await self.client.update(REPLICA_SETS, body, subresource="status")
                return dict(stored.get("status") or {})
            except StatusError as err:
                if is_not_found(err):
                    return status
                if not is_conflict(err) or attempt:
                    raise
                rs = await self.client.get(REPLICA_SETS, meta.name(rs), meta.namespace(rs))
        return status
