"""The Deployment controller (pkg/controller/deployment): ReplicaSets for a pod template.

Handlers enqueue the Deployment of a changed ReplicaSet (every matching one for an orphan) and,
for Recreate, of a deleted pod. `sync(key)` claims ReplicaSets, then by the Deployment's state
syncs status only (being deleted), scales proportionally (paused, or a scaling event), rolls
back (the legacy annotation), or runs one step of the strategy (`deployment_rollout.py`).
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_already_exists, is_conflict, is_not_found
from draplane.api.kinds import DEPLOYMENTS, PODS, REPLICA_SETS
from draplane.api.meta import Obj
from draplane.api.selectors import LabelSelector
from draplane.client.informer import Informer, unwrap
from draplane.controllers import deployment_rollout as rollout
from draplane.controllers.context import ControllerContext
from draplane.controllers.controllerref import claim_children
from draplane.controllers.deployment_scale import is_scaling_event, new_rs_new_replicas
from draplane.controllers.deployment_status import (
    FOUND_NEW_RS,
    NEW_RS_CREATED,
    PROGRESSING,
    RS_CREATE_ERROR,
    condition,
    has_progress_deadline,
    new_condition,
    paused_condition,
    requeue_after,
    set_condition,
)
from draplane.controllers.deployment_util import (
    REVISION,
    ROLLBACK_TO,
    compute_hash,
    equal_ignore_hash,
    find_new_replica_set,
    max_revision,
    max_surge,
    new_replica_set,
    replicas,
    set_new_replica_set_annotations,
    set_replicas_annotations,
    spec,
    status,
)
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.controllers.replicaset import (
    CONTROLLER_UID_INDEX,
    candidates,
    controller_uid_index,
)

log = logging.getLogger(__name__)

QUEUE_NAME = "deployment"
WORKERS = 5
DEPLOYMENT = "Deployment"
MAX_RETRIES = 15


class DeploymentController(QueueController):
    NAME = "deployment-controller"
    QUEUE_NAME = QUEUE_NAME

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self._deployments = ctx.informers.informer(DEPLOYMENTS)
        self._rs = ctx.informers.informer(
            REPLICA_SETS, indexers={CONTROLLER_UID_INDEX: controller_uid_index}
        )
        self.pods = ctx.informers.informer(
            PODS, indexers={CONTROLLER_UID_INDEX: controller_uid_index}
        )
        self._deployments.add_handler(
            on_add=self._enqueue,
            on_update=lambda _, d: self._enqueue(d),
            on_delete=lambda d: self._enqueue(unwrap(d)),
        )
        self._rs.add_handler(
            on_add=self._on_rs,
            on_update=self._on_rs_update,
            on_delete=lambda rs: self._on_rs(unwrap(rs)),
        )
        self.pods.add_handler(on_delete=lambda pod: self._on_pod_delete(unwrap(pod)))

    def informers(self) -> tuple[Informer, ...]:
        return (self._deployments, self._rs, self.pods)

    async def process(self, key: ObjectKey) -> None:
        try:
            await self.sync(key)
        except Exception:
            if self.queue.num_requeues(key) >= MAX_RETRIES:
                log.info("Dropping deployment %s out of the queue", key)
                self.queue.forget(key)
                return
            raise

    # -- handlers -----------------------------------------------------------------------------

    def _enqueue(self, d: Obj) -> None:
        self.queue.add(ObjectKey.of(DEPLOYMENT, d))

    def _owner(self, rs: Obj, ref: Obj | None) -> Obj | None:
        if ref is None or ref.get("kind") != DEPLOYMENT:
            return None
        d = self._deployments.lister.get(str(ref.get("name")), meta.namespace(rs))
        return d if d is not None and meta.uid(d) == ref.get("uid") else None

    def _matching(self, rs: Obj) -> list[Obj]:
        labels = meta.labels(rs)
        out = []
        for d in self._deployments.lister.list(meta.namespace(rs)):
            selector = LabelSelector.from_label_selector(spec(d).get("selector"))
            if not selector.empty() and selector.matches(labels):
                out.append(d)
        return out

    def _on_rs(self, rs: Obj) -> None:
        ref = meta.controller_ref(rs)
        if ref is not None:
            if (d := self._owner(rs, ref)) is not None:
                self._enqueue(d)
            return
        for d in self._matching(rs):
            self._enqueue(d)

    def _on_rs_update(self, old: Obj, new: Obj) -> None:
        if meta.resource_version(old) == meta.resource_version(new):
            return
        old_ref, new_ref = meta.controller_ref(old), meta.controller_ref(new)
        changed = old_ref is not None and old_ref.get("uid") != (new_ref or {}).get("uid")
        if changed and (d := self._owner(old, old_ref)) is not None:
            self._enqueue(d)
        if new_ref is None and meta.labels(old) == meta.labels(new) and old_ref is None:
            return
        self._on_rs(new)

    def _on_pod_delete(self, pod: Obj) -> None:
        ref = meta.controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self._rs.lister.get(str(ref.get("name")), meta.namespace(pod))
        if rs is None or meta.uid(rs) != ref.get("uid"):
            return
        d = self._owner(rs, meta.controller_ref(rs))
        if d is not None and (spec(d).get("strategy") or {}).get("type") == "Recreate":
            self._enqueue(d)

    # -- sync ---------------------------------------------------------------------------------

    async def sync(self, key: ObjectKey) -> None:
        cached = self._deployments.lister.get(key.name, key.namespace)
        if cached is None:
            return
        d = meta.deep_copy(cached)
        selector = LabelSelector.from_label_selector(spec(d).get("selector"))
        if selector.empty():
            self.recorder.event(
                d,
                "Warning",
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            generation = int(meta.metadata(d).get("generation") or 0)
            if int(status(d).get("observedGeneration") or 0) < generation:
                await self.update_status(d, {**status(d), "observedGeneration": generation})
            return
        rss = await self._claim_replica_sets(d, selector)
        if meta.deletion_timestamp(d):
            await rollout.sync_status_only(self, d, rss)
            return
        if (paused := paused_condition(d, self.clock.now())) is not None:
            d = await self.update_status(d, paused)
        if spec(d).get("paused"):
            await rollout.sync_scale(self, d, rss)
            return
        if ROLLBACK_TO in meta.annotations(d):
            await rollout.rollback(self, d, rss)
            return
        new_rs, old_rss = await self.get_all_replica_sets(d, rss, create=False)
        if is_scaling_event(d, [new_rs, *old_rss]):
            await rollout.sync_scale(self, d, rss)
            return
        if (spec(d).get("strategy") or {}).get("type") == "Recreate":
            await rollout.rollout_recreate(self, d, rss)
        else:
            await rollout.rollout_rolling(self, d, rss)

    async def _claim_replica_sets(self, d: Obj, selector: LabelSelector) -> list[Obj]:
        owned_or_orphans = candidates(self._rs.lister, d)

        async def recheck() -> Obj:
            return await self.client.get(DEPLOYMENTS, meta.name(d), meta.namespace(d))

        return await claim_children(
            self.client, REPLICA_SETS, d, selector, owned_or_orphans, recheck_owner=recheck
        )

    def pods_by_replica_set(self, rss: list[Obj]) -> dict[str, list[Obj]]:
        return {
            meta.uid(rs): self.pods.lister.by_index(CONTROLLER_UID_INDEX, meta.uid(rs))
            for rs in rss
        }

    async def get_all_replica_sets(
        self, d: Obj, rss: list[Obj], *, create: bool
    ) -> tuple[Obj | None, list[Obj]]:
        """getAllReplicaSetsAndSyncRevision: the new ReplicaSet (created if `create`), and the
        old ones."""
        existing = find_new_replica_set(d, rss)
        old = [rs for rs in rss if existing is None or meta.uid(rs) != meta.uid(existing)]
        new_rs = await self._get_new_replica_set(d, rss, old, existing, create=create)
        return new_rs, old

    async def _get_new_replica_set(
        self, d: Obj, rss: list[Obj], old: list[Obj], existing: Obj | None, *, create: bool
    ) -> Obj | None:
        new_revision = max_revision(old) + 1
        if existing is not None:
            rs = meta.deep_copy(existing)
            changed = set_new_replica_set_annotations(d, rs, new_revision, exists=True)
            min_ready = int(spec(d).get("minReadySeconds") or 0)
            if changed or int(spec(rs).get("minReadySeconds") or 0) != min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
                rs = await self.client.update(REPLICA_SETS, rs)
                # Later steps of this sync read the list: give them the stored version.
                rss[:] = [rs if meta.uid(r) == meta.uid(rs) else r for r in rss]
            await self._sync_revision(d, meta.annotations(rs).get(REVISION, ""))
            if has_progress_deadline(d) and condition(status(d), PROGRESSING) is None:
                new_status = meta.deep_copy(status(d))
                message = f'Found new replica set "{meta.name(rs)}"'
                set_condition(
                    new_status,
                    new_condition(PROGRESSING, "True", FOUND_NEW_RS, message, self.clock.now()),
                )
                await self.update_status(d, new_status)
            return rs
        if not create:
            return None
        collision_count = status(d).get("collisionCount")
        pod_hash = compute_hash(spec(d).get("template") or {}, collision_count)
        body = new_replica_set(d, pod_hash, 0, new_revision)
        body["spec"]["replicas"] = new_rs_new_replicas(d, [*old, body], body)
        try:
            created = await self.client.create(REPLICA_SETS, body, meta.namespace(d))
        except StatusError as err:
            if not is_already_exists(err):
                return await self._create_failed(d, err)
            live = await self.client.get(REPLICA_SETS, meta.name(body), meta.namespace(d))
            ref = meta.controller_ref(live)
            if (
                ref is not None
                and ref.get("uid") == meta.uid(d)
                and equal_ignore_hash(
                    spec(live).get("template") or {}, spec(d).get("template") or {}
                )
            ):
                return live
            # A hash collision: the next sync hashes with a higher count.
            new_status = meta.deep_copy(status(d))
            new_status["collisionCount"] = int(collision_count or 0) + 1
            await self.update_status(d, new_status)
            raise
        new_replicas = replicas(created)
        if new_replicas > 0:
            self.recorder.event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {meta.name(created)} from 0 to {new_replicas}",
            )
        await self._sync_revision(d, str(new_revision))
        if has_progress_deadline(d):
            new_status = meta.deep_copy(status(d))
            message = f'Created new replica set "{meta.name(created)}"'
            set_condition(
                new_status,
                new_condition(PROGRESSING, "True", NEW_RS_CREATED, message, self.clock.now()),
            )
            await self.update_status(d, new_status)
        return created

    async def _create_failed(self, d: Obj, err: StatusError) -> Obj | None:
        message = f"Failed to create new replica set: {err}"
        self.recorder.event(d, "Warning", RS_CREATE_ERROR, message)
        if has_progress_deadline(d):
            new_status = meta.deep_copy(status(d))
            set_condition(
                new_status,
                new_condition(PROGRESSING, "False", RS_CREATE_ERROR, message, self.clock.now()),
            )
            await self.update_status(d, new_status)
        raise err

    async def _sync_revision(self, d: Obj, revision: str) -> None:
        """The Deployment's own revision annotation follows its new ReplicaSet's; written
        through `deployments/status`, as upstream does, so the generation stays."""
        if not revision or meta.annotations(d).get(REVISION) == revision:
            return
        body = meta.deep_copy(d)
        body["metadata"].setdefault("annotations", {})[REVISION] = revision
        stored = await self.client.update(DEPLOYMENTS, body, subresource="status")
        d["metadata"] = stored["metadata"]

    async def scale_replica_set(self, d: Obj, rs: Obj, size: int) -> Obj:
        """Set `rs` to `size` and its replica annotations; a size change is a ScalingReplicaSet
        event (scaleReplicaSetAndRecordEvent)."""
        body = meta.deep_copy(rs)
        old_size = replicas(rs)
        annotations_changed = set_replicas_annotations(
            body, replicas(d), replicas(d) + max_surge(d)
        )
        if old_size == size and not annotations_changed:
            return rs
        body["spec"]["replicas"] = size
        updated = await self.client.update(REPLICA_SETS, body)
        if old_size != size:
            direction = "up" if size > old_size else "down"
            self.recorder.event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {direction} replica set {meta.name(rs)} from {old_size} to {size}",
            )
        return updated

    async def update_status(self, d: Obj, new_status: Obj) -> Obj:
        """PUT deployments/status; `d` is updated in place and returned."""
        if status(d) == new_status:
            return d
        body = meta.deep_copy(d)
        body["status"] = new_status
        try:
            stored = await self.client.update(DEPLOYMENTS, body, subresource="status")
        except StatusError as err:
            if is_not_found(err):  # deleted meanwhile: nothing left to report on
                return d
            raise
        d.clear()
        d.update(stored)
        return d

    def requeue_stuck(self, d: Obj, new_status: Obj) -> None:
        after = requeue_after(d, new_status, self.clock.now())
        if after is None:
            return
        key = ObjectKey.of(DEPLOYMENT, d)
        if after == 0:
            self.queue.add(key)
        else:
            self.queue.add_after(key, after)

    async def delete_replica_set(self, rs: Obj) -> None:
        try:
            await self.client.delete(
                REPLICA_SETS, meta.name(rs), meta.namespace(rs), preconditions={"uid": meta.uid(rs)}
            )
        except StatusError as err:
            if not (is_not_found(err) or is_conflict(err)):
                raise
