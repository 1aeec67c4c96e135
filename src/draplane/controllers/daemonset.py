"""The DaemonSet controller (pkg/controller/daemon): one pod per eligible node, placed through a
`matchFields` node affinity the scheduler binds, ControllerRevisions for the template history,
rolling updates, status.

Handlers map set, pod, revision and node events onto the set's `ObjectKey`; a sync claims the
set's pods and revisions, finds or creates the current revision (history.py), runs
`daemonset_plan.manage` and, once its creates and deletes are confirmed (expectations), the
rolling update step, then trims the history and writes status.
"""

from __future__ import annotations

import asyncio
import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_conflict, is_not_found
from draplane.api.kinds import CONTROLLER_REVISIONS, DAEMON_SETS, NODES, PODS
from draplane.api.meta import Obj
from draplane.client.events import NORMAL, WARNING
from draplane.client.informer import Informer
from draplane.controllers import daemonset_plan as plans, workload
from draplane.controllers.context import ControllerContext
from draplane.controllers.daemonset_nodes import new_pod
from draplane.controllers.history import History, revision_hash, template_data
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.klog import V2

log = logging.getLogger(__name__)

KIND = "DaemonSet"
QUEUE_NAME = "daemonset"
WORKERS = 2
EVENT_COMPONENT = "daemonset-controller"
DEFAULT_HISTORY_LIMIT = 10
BURST_REPLICAS = 250
FAILED_BACKOFF_INITIAL = 1.0
FAILED_BACKOFF_MAX = 900.0
_STATUS_FIELDS = (
    "observedGeneration",
    "currentNumberScheduled",
    "numberMisscheduled",
    "desiredNumberScheduled",
    "numberReady",
    "updatedNumberScheduled",
    "numberAvailable",
    "numberUnavailable",
    "collisionCount",
)


class DaemonSetController(QueueController):
    NAME = "daemon-set-controller"
    QUEUE_NAME = QUEUE_NAME
    EVENT_COMPONENT = EVENT_COMPONENT
    DISPLAY_NAME = "daemon sets controller"
    WORKERS = WORKERS

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self._sets = ctx.informers.informer(DAEMON_SETS)
        self._pods = ctx.informers.informer(PODS)
        self._revisions = ctx.informers.informer(CONTROLLER_REVISIONS)
        self._nodes = ctx.informers.informer(NODES)
        self.history = History(self.client)
        self.expectations = workload.Expectations(self.clock)
        self._backoff: dict[tuple[str, str], tuple[float, float]] = {}
        pods = workload.OwnerQueue(
            KIND, DAEMON_SETS.api_version, self._sets.lister, self.queue, self.expectations
        )
        pods.watch(self._pods)
        workload.OwnerQueue(KIND, DAEMON_SETS.api_version, self._sets.lister, self.queue).watch(
            self._revisions
        )
        self._sets.add_handler(on_add=pods.enqueue, on_update=lambda _, new: pods.enqueue(new))
        self._nodes.add_handler(
            on_add=lambda _: self._enqueue_all(),
            on_update=self._node_updated,
            on_delete=lambda _: self._enqueue_all(),
        )

    def informers(self) -> tuple[Informer, ...]:
        return (self._sets, self._pods, self._revisions, self._nodes)

    def _enqueue_all(self) -> None:
        for ds in self._sets.lister.list():
            self.queue.add(ObjectKey.of(KIND, ds))

    def _node_updated(self, old: Obj, new: Obj) -> None:
        def relevant(node: Obj) -> tuple[object, ...]:
            return (meta.labels(node), (node.get("spec") or {}).get("taints"))

        if relevant(old) != relevant(new):
            self._enqueue_all()

    async def sync(self, key: ObjectKey) -> None:
        ds = self._sets.lister.get(key.name, key.namespace)
        if ds is None:
            self.expectations.forget(key)
            return
        if workload.selector_of(ds).empty():
            message = "This daemon set is selecting all pods. A non-empty selector is required."
            self.recorder.event(ds, WARNING, "SelectingAll", message)
            return
        if meta.deletion_timestamp(ds):
            return
        namespace = key.namespace
        nodes = self._nodes.lister.list()
        pods = await workload.claim_children(
            self.client, PODS, ds, self._pods.lister.list(namespace)
        )
        revisions = await workload.claim_children(
            self.client, CONTROLLER_REVISIONS, ds, self._revisions.lister.list(namespace)
        )
        template = (ds.get("spec") or {}).get("template") or {}
        collision_count = int((ds.get("status") or {}).get("collisionCount") or 0)
        current, collision_count = await self.history.update_revision(
            ds,
            revisions,
            template_data(template),
            collision_count=collision_count,
            labels=dict((template.get("metadata") or {}).get("labels") or {}),
        )
        hash_ = revision_hash(current)
        now = self.clock.now()
        satisfied = self.expectations.satisfied(key)
        if satisfied:
            by_node = plans.pods_by_node(pods)
            changes = plans.manage(ds, nodes, by_node, hash_, now)
            changes.delete.extend(self._failed_pods(ds, key, changes))
            if changes.empty() and plans.is_rolling(ds):
                changes = plans.rolling_update(ds, nodes, by_node, hash_, now)
            for reason, message in changes.events:
                self.recorder.event(ds, NORMAL, reason, message)
            await self._sync_nodes(ds, key, template, changes, hash_)
            if all(meta.name(r) != meta.name(current) for r in revisions):
                revisions = [*revisions, current]
            live_hashes = {meta.labels(p).get("controller-revision-hash") for p in pods}
            live = {meta.name(r) for r in revisions if revision_hash(r) in live_hashes}
            limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
            await self.history.truncate(
                revisions,
                live | {meta.name(current)},
                DEFAULT_HISTORY_LIMIT if limit is None else int(limit),
            )
        status = plans.status(ds, nodes, plans.pods_by_node(pods), hash_, now)
        status["collisionCount"] = collision_count
        await self._write_status(ds, status, observed=satisfied)
        waits = [workload.available_in(p, plans.min_ready_seconds(ds), now) for p in pods]
        delay = min((w for w in waits if w is not None), default=None)
        if delay is not None:
            self.queue.add_after(key, delay)

    def _failed_pods(self, ds: Obj, key: ObjectKey, changes: plans.Changes) -> list[Obj]:
        """Failed pods to delete now: per node an exponential back-off (FailedDaemonPod)."""
        due: list[Obj] = []
        now = self.clock.monotonic()
        for node, pod in changes.failed:
            backoff_key = (meta.key(ds), node)
            until, delay = self._backoff.get(backoff_key, (0.0, 0.0))
            if now < until:
                self.queue.add_after(key, until - now)
                continue
            delay = min(max(delay * 2, FAILED_BACKOFF_INITIAL), FAILED_BACKOFF_MAX)
            self._backoff[backoff_key] = (now + delay, delay)
            message = f"Found failed daemon pod {meta.key(pod)} on node {node}, will try to kill it"
            self.recorder.event(ds, WARNING, plans.FAILED_DAEMON_POD, message)
            due.append(pod)
        return due

    async def _sync_nodes(
        self, ds: Obj, key: ObjectKey, template: Obj, changes: plans.Changes, hash_: str
    ) -> None:
        """syncNodes: creates in slow-start batches, then deletes, each capped per sync."""
        creates = changes.create_on[:BURST_REPLICAS]
        deletes = changes.delete[:BURST_REPLICAS]
        self.expectations.expect(key, creates=len(creates), deletes=(meta.key(p) for p in deletes))
        errors: list[BaseException] = []
        pending, size = list(creates), 1
        while pending and not errors:
            batch, pending = pending[:size], pending[size:]
            outcomes = await asyncio.gather(
                *(self._create(ds, template, node, hash_) for node in batch),
                return_exceptions=True,
            )
            errors = [o for o in outcomes if isinstance(o, BaseException)]
            failed = len(errors) + (len(pending) if errors else 0)
            if failed:
                self.expectations.created(key, failed)
            size *= 2
        for pod in deletes:
            try:
                await self.client.delete(
                    PODS, meta.name(pod), meta.namespace(pod), preconditions={"uid": meta.uid(pod)}
                )
                self.recorder.event(
                    ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {meta.name(pod)}"
                )
            except StatusError as err:
                self.expectations.deleted(key, meta.key(pod))
                if not (is_not_found(err) or is_conflict(err)):
                    self.recorder.event(ds, WARNING, "FailedDelete", f"Error deleting: {err}")
                    errors.append(err)
        if errors:
            raise errors[0]

    async def _create(self, ds: Obj, template: Obj, node: str, hash_: str) -> None:
        log.log(V2, "DaemonSet %s: creating a pod on node %s", meta.key(ds), node)
        try:
            created = await self.client.create(
                PODS, new_pod(ds, template, node, hash_), meta.namespace(ds)
            )
        except StatusError as err:
            if workload.is_namespace_terminating(err):
                return
            self.recorder.event(ds, WARNING, "FailedCreate", f"Error creating: {err}")
            raise
        self.recorder.event(ds, NORMAL, "SuccessfulCreate", f"Created pod: {meta.name(created)}")

    async def _write_status(self, ds: Obj, fields: Obj, *, observed: bool) -> None:
        generation = int(meta.metadata(ds).get("generation") or 0)
        old = ds.get("status") or {}
        fields["observedGeneration"] = generation if observed else old.get("observedGeneration", 0)
        wanted = plans.wire_status(fields)
        if all(old.get(f) == wanted.get(f) for f in _STATUS_FIELDS):
            return
        for attempt in range(2):
            body = meta.deep_copy(ds)
            body["status"] = {
                **{k: v for k, v in old.items() if k not in _STATUS_FIELDS},
                **wanted,
            }
            try:
                await self.client.update(DAEMON_SETS, body, subresource="status")
                return
            except StatusError as err:
                if is_not_found(err):
                    return
                if not is_conflict(err) or attempt:
                    raise
            ds = await self.client.get(DAEMON_SETS, meta.name(ds), meta.namespace(ds))
            old = ds.get("status") or {}
