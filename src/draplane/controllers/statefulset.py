"""The StatefulSet controller (pkg/controller/statefulset): pods `<set>-<ordinal>` from the
template of the revision each should run, ControllerRevisions for the template history, status.

Handlers map set, pod and revision events onto the set's `ObjectKey`; a sync claims the set's
pods and revisions (adopt/release), finds or creates the update revision (history.py), lets
`statefulset_plan.plan` decide, executes its actions in order (OrderedReady one at a time,
Parallel in slow-start batches), writes status and trims the history.
"""

from __future__ import annotations

import asyncio
import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_conflict, is_not_found
from draplane.api.kinds import CONTROLLER_REVISIONS, PODS, STATEFUL_SETS
from draplane.api.meta import Obj
from draplane.client.events import NORMAL, WARNING
from draplane.client.informer import Informer
from draplane.controllers import workload
from draplane.controllers.context import ControllerContext
from draplane.controllers.history import History, template_data
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.controllers.statefulset_plan import (
    Action,
    Plan,
    ordinal_of,
    plan,
    pod_revision,
    spec_of,
    wire_status,
)
from draplane.klog import V2

log = logging.getLogger(__name__)

KIND = "StatefulSet"
QUEUE_NAME = "statefulset"
WORKERS = 5
DEFAULT_HISTORY_LIMIT = 10
_STATUS_FIELDS = (
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
)


class StatefulSetController(QueueController):
    NAME = "statefulset-controller"
    QUEUE_NAME = QUEUE_NAME

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self._sets = ctx.informers.informer(STATEFUL_SETS)
        self._pods = ctx.informers.informer(PODS)
        self._revisions = ctx.informers.informer(CONTROLLER_REVISIONS)
        self.history = History(self.client)
        owners = workload.OwnerQueue(KIND, STATEFUL_SETS.api_version, self._sets.lister, self.queue)
        owners.watch(self._pods)
        owners.watch(self._revisions)
        self._sets.add_handler(on_add=owners.enqueue, on_update=lambda _, new: owners.enqueue(new))

    def informers(self) -> tuple[Informer, ...]:
        return (self._sets, self._pods, self._revisions)

    async def sync(self, key: ObjectKey) -> None:
        set_ = self._sets.lister.get(key.name, key.namespace)
        if set_ is None:
            return
        namespace = key.namespace
        members = [p for p in self._pods.lister.list(namespace) if ordinal_of(set_, p) is not None]
        pods = await workload.claim_children(self.client, PODS, set_, members)
        revisions = await workload.claim_children(
            self.client, CONTROLLER_REVISIONS, set_, self._revisions.lister.list(namespace)
        )
        status = set_.get("status") or {}
        template = spec_of(set_).get("template") or {}
        update, collision_count = await self.history.update_revision(
            set_,
            revisions,
            template_data(template),
            collision_count=int(status.get("collisionCount") or 0),
            labels=dict((template.get("metadata") or {}).get("labels") or {}),
        )
        current = next(
            (r for r in revisions if meta.name(r) == status.get("currentRevision")), update
        )
        result = plan(
            set_,
            pods,
            current=current,
            update=update,
            collision_count=collision_count,
            now=self.clock.now(),
        )
        try:
            await self._execute(set_, result)
        finally:
            await self._write_status(set_, result.status)
        if all(meta.name(r) != meta.name(update) for r in revisions):
            revisions = [*revisions, update]
        live = {meta.name(current), meta.name(update), *(pod_revision(p) for p in pods)}
        limit = spec_of(set_).get("revisionHistoryLimit")
        await self.history.truncate(
            revisions, live, DEFAULT_HISTORY_LIMIT if limit is None else int(limit)
        )
        if result.requeue_after is not None:
            self.queue.add_after(key, result.requeue_after)

    async def _execute(self, set_: Obj, result: Plan) -> None:
        if result.monotonic:
            for action in result.actions:
                await self._run(set_, action)
            return
        # Parallel: slow-start batches of 1, 2, 4...; the first batch with an error stops.
        pending, size = list(result.actions), 1
        while pending:
            batch, pending = pending[:size], pending[size:]
            outcomes = await asyncio.gather(
                *(self._run(set_, a) for a in batch), return_exceptions=True
            )
            errors = [o for o in outcomes if isinstance(o, BaseException)]
            if errors:
                raise errors[0]
            size *= 2

    async def _run(self, set_: Obj, action: Action) -> None:
        pod = action.pod
        name, namespace = meta.name(pod), meta.namespace(set_)
        log.log(V2, "StatefulSet %s: %s", meta.key(set_), action)
        try:
            if action.verb == "create":
                await self.client.create(PODS, pod, namespace)
            elif action.verb == "delete":
                await self.client.delete(
                    PODS, name, namespace, preconditions={"uid": meta.uid(pod)}
                )
            else:
                await self.client.update(PODS, pod)
        except StatusError as err:
            if workload.is_namespace_terminating(err):
                return
            if action.verb == "delete" and (is_not_found(err) or is_conflict(err)):
                return
            if action.verb == "create" and err.reason == "AlreadyExists":
                raise
            self._pod_event(set_, action, err)
            raise
        self._pod_event(set_, action, None)

    def _pod_event(self, set_: Obj, action: Action, err: StatusError | None) -> None:
        verb, pod_name = action.verb, meta.name(action.pod)
        reason = ("Failed" if err else "Successful") + verb.capitalize()
        if err is None:
            message = f"{verb} Pod {pod_name} in StatefulSet {meta.name(set_)} successful"
        else:
            message = f"{verb} Pod {pod_name} in StatefulSet {meta.name(set_)} failed error: {err}"
        self.recorder.event(set_, WARNING if err else NORMAL, reason, message)

    async def _write_status(self, set_: Obj, status: Obj) -> None:
        wanted = wire_status(status)
        old = set_.get("status") or {}
        if all(old.get(f) == wanted.get(f) for f in _STATUS_FIELDS):
            return
        for attempt in range(2):
            body = meta.deep_copy(set_)
            body["status"] = {**(set_.get("status") or {}), **wanted}
            for f in _STATUS_FIELDS:
                if f not in wanted:
                    body["status"].pop(f, None)
            try:
                await self.client.update(STATEFUL_SETS, body, subresource="status")
                return
            except StatusError as err:
                if is_not_found(err):
                    return
                if not is_conflict(err) or attempt:
                    raise
            set_ = await self.client.get(STATEFUL_SETS, meta.name(set_), meta.namespace(set_))
