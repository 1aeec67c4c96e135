"""The Job controller (batch/v1): runs a Job's pods to completion and tracks them in its status.

Handlers only enqueue `ObjectKey`s; workers run `sync(key)`: a `Job` key runs one sync
(`job_sync.plan_sync`, then the writes it asks for), a `Pod` key strips the tracking finalizer
from a pod whose Job is gone or finished (the orphan-pod worker upstream). Creates and deletes
wait for the informer to confirm earlier ones (`Expectations`); finalizer removals not yet seen
are skipped when counting, so a stale cache never counts a pod twice.
"""

from __future__ import annotations

import asyncio
import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_not_found
from draplane.api.kinds import JOBS, PODS
from draplane.api.meta import Obj
from draplane.client.events import NORMAL, WARNING
from draplane.client.informer import DeletedFinalStateUnknown, Informer, unwrap
from draplane.client.mutationcache import MutationCache
from draplane.controllers import job_util as ju
from draplane.controllers.context import ControllerContext
from draplane.controllers.job_backoff import BackoffRecord
from draplane.controllers.job_flush import flush_status
from draplane.controllers.job_sync import JobPlan, plan_sync
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.controllers.workload import (
    Expectations,
    controller_uid_of,
    is_namespace_terminating,
)

log = logging.getLogger(__name__)

QUEUE_NAME = "job"
WORKERS = 5
JOB_UID_INDEX = "job-controller-uid"
JOB = "Job"
POD = "Pod"


def remove_finalizer_patch(pod: Obj) -> Obj:
    """The strategic-merge patch that drops the tracking finalizer (uid as a precondition)."""
    return {
        "metadata": {
            "uid": meta.uid(pod),
            "$deleteFromPrimitiveList/finalizers": [ju.JOB_TRACKING_FINALIZER],
        }
    }


job_uid_index = controller_uid_of(JOB, "batch/v1")


class JobController(QueueController):
    NAME = "job-controller"
    QUEUE_NAME = QUEUE_NAME

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.expectations = Expectations(self.clock)
        self._removing: set[str] = set()
        """Pod UIDs whose finalizer removal was sent and not yet seen in the informer."""
        self._backoff: dict[str, BackoffRecord] = {}
        self._jobs = ctx.informers.informer(JOBS)
        # The Job as this controller last wrote it, until the informer has that version: a
        # sync right after a status write (its pods' events) must not start from a stale Job.
        self._written = MutationCache(self._jobs.lister, max_entries=1000, clock=self.clock)
        self._pods = ctx.informers.informer(PODS, indexers={JOB_UID_INDEX: job_uid_index})
        self._jobs.add_handler(
            on_add=self._enqueue_job,
            on_update=lambda _, job: self._enqueue_job(job),
            on_delete=self._on_job_delete,
        )
        self._pods.add_handler(
            on_add=self._on_pod_add, on_update=self._on_pod_update, on_delete=self._on_pod_delete
        )

    def informers(self) -> tuple[Informer, ...]:
        return (self._jobs, self._pods)

    # --- handlers ---------------------------------------------------------------------------

    def _enqueue_job(self, job: Obj) -> None:
        self.queue.add(ObjectKey.of(JOB, job))

    def _on_job_delete(self, deleted: Obj | DeletedFinalStateUnknown) -> None:
        job = unwrap(deleted)
        key = meta.key(job)
        self._written.forget(job)
        self.expectations.forget(ObjectKey.of(JOB, job))
        self._backoff.pop(key, None)
        for pod in self._pods.lister.by_index(JOB_UID_INDEX, meta.uid(job)):
            if ju.has_tracking_finalizer(pod):
                self.queue.add(ObjectKey.of(POD, pod))

    def _job_of(self, pod: Obj) -> Obj | None:
        """The pod's controlling Job in the cache, if it has one with that UID."""
        uids = job_uid_index(pod)
        if not uids:
            return None
        ref = meta.controller_ref(pod) or {}
        job = self._jobs.lister.get(str(ref.get("name")), meta.namespace(pod))
        return job if job is not None and meta.uid(job) == uids[0] else None

    def _route_pod(self, pod: Obj) -> None:
        if not job_uid_index(pod):
            # Orphaned (`--cascade=orphan`) or never a Job's: nothing will count it.
            if ju.has_tracking_finalizer(pod) and meta.controller_ref(pod) is None:
                self.queue.add(ObjectKey.of(POD, pod))
            return
        job = self._job_of(pod)
        if job is None:
            if ju.has_tracking_finalizer(pod):
                self.queue.add(ObjectKey.of(POD, pod))
            return
        if ju.finished_type(job) is not None and ju.has_tracking_finalizer(pod):
            self.queue.add(ObjectKey.of(POD, pod))
        self._enqueue_job(job)

    def _on_pod_add(self, pod: Obj) -> None:
        job = self._job_of(pod)
        if job is not None:
            self.expectations.created(ObjectKey.of(JOB, job))
            if meta.deletion_timestamp(pod):
                self.expectations.deleted(ObjectKey.of(JOB, job), meta.key(pod))
        self._route_pod(pod)

    def _on_pod_update(self, old: Obj, pod: Obj) -> None:
        if not ju.has_tracking_finalizer(pod):
            self._removing.discard(meta.uid(pod))
        job = self._job_of(pod)
        if job is not None and meta.deletion_timestamp(pod) and not meta.deletion_timestamp(old):
            self.expectations.deleted(ObjectKey.of(JOB, job), meta.key(pod))
        self._route_pod(pod)

    def _on_pod_delete(self, deleted: Obj | DeletedFinalStateUnknown) -> None:
        pod = unwrap(deleted)
        self._removing.discard(meta.uid(pod))
        job = self._job_of(pod)
        if job is not None:
            self.expectations.deleted(ObjectKey.of(JOB, job), meta.key(pod))
            self._enqueue_job(job)

    # --- sync -------------------------------------------------------------------------------

    async def sync(self, key: ObjectKey) -> None:
        if key.kind == POD:
            await self._sync_orphan_pod(key)
            return
        job = self._written.get(key.name, key.namespace)
        if job is None:
            return
        job_key = meta.key(job)
        pods = self._pods.lister.by_index(JOB_UID_INDEX, meta.uid(job))
        plan = plan_sync(
            job,
            pods,
            now=self.clock.now(),
            backoff=self._backoff.get(job_key, BackoffRecord()),
            satisfied=self.expectations.satisfied(key),
            expected_removals=frozenset(self._removing),
        )
        if ju.finished_type(job) is not None:
            self._backoff.pop(job_key, None)
            await self._remove_finalizers(plan.finalize)
            return
        errors = [*await self._delete_pods(job, plan), *await self._create_pods(job, plan)]
        job = await self._write_status(job, plan.status)
        self._backoff[job_key] = plan.backoff
        still_tracked = await self._remove_finalizers(plan.finalize)
        finalized = {meta.uid(p) for p in plan.finalize}
        still_tracked |= {
            meta.uid(p)
            for p in pods
            if ju.has_tracking_finalizer(p) and meta.uid(p) not in finalized
        }
        final, events = flush_status(plan.status, still_tracked, plan.finished, self.clock.now())
        job = await self._write_status(job, final)
        for type_, reason, message in [*plan.events, *events]:
            self.recorder.event(job, type_, reason, message)
        if plan.requeue_after is not None:
            self.queue.add_after(key, plan.requeue_after)
        if errors:
            raise errors[0]

    async def _write_status(self, job: Obj, status: Obj) -> Obj:
        if (job.get("status") or {}) == status:
            return job
        updated = meta.deep_copy(job)
        updated["status"] = status
        written = await self.client.update(JOBS, updated, subresource="status")
        self._written.mutation(written)
        return written

    async def _delete_pods(self, job: Obj, plan: JobPlan) -> list[StatusError]:
        if not plan.delete:
            return []
        job_key = ObjectKey.of(JOB, job)
        self.expectations.expect(job_key, deletes=[meta.key(p) for p in plan.delete])
        errors: list[StatusError] = []
        for pod in plan.delete:
            try:
                await self.client.delete(
                    PODS, meta.name(pod), meta.namespace(pod), preconditions={"uid": meta.uid(pod)}
                )
            except StatusError as err:
                self.expectations.deleted(job_key, meta.key(pod))
                if not is_not_found(err):
                    self.recorder.event(job, WARNING, "FailedDelete", f"Error deleting: {err}")
                    errors.append(err)
                continue
            self.recorder.event(job, NORMAL, "SuccessfulDelete", f"Deleted pod: {meta.name(pod)}")
        return errors

    async def _create_pods(self, job: Obj, plan: JobPlan) -> list[StatusError]:
        """Slow start: batches of 1, 2, 4 ...; the first batch with an error stops."""
        if not plan.create:
            return []
        job_key = ObjectKey.of(JOB, job)
        self.expectations.expect(job_key, creates=len(plan.create))
        errors: list[StatusError] = []
        pending = list(plan.create)
        batch = 1
        while pending and not errors:
            current, pending = pending[:batch], pending[batch:]
            results = await asyncio.gather(
                *(self._create_pod(job, i, plan.failures_of(i)) for i in current),
                return_exceptions=True,
            )
            for result in results:
                if isinstance(result, BaseException):
                    self.expectations.created(job_key)
                    if isinstance(result, StatusError):
                        errors.append(result)
                    else:
                        raise result
            batch *= 2
        for _ in pending:  # skipped by an error: the informer will never see them
            self.expectations.created(job_key)
        return [e for e in errors if not is_namespace_terminating(e)]

    async def _create_pod(self, job: Obj, index: int | None, failures: int | None) -> None:
        pod = ju.pod_from_template(job, index, failures)
        try:
            created = await self.client.create(PODS, pod, meta.namespace(job))
        except StatusError as err:
            if not is_namespace_terminating(err):
                self.recorder.event(job, WARNING, "FailedCreate", f"Error creating: {err}")
            raise
        self.recorder.event(job, NORMAL, "SuccessfulCreate", f"Created pod: {meta.name(created)}")

    async def _remove_finalizers(self, pods: list[Obj]) -> set[str]:
        """Strip the tracking finalizer; returns the UIDs whose removal failed."""
        failed: set[str] = set()
        for pod in pods:
            self._removing.add(meta.uid(pod))
            try:
                await self.client.patch(
                    PODS,
                    meta.name(pod),
                    remove_finalizer_patch(pod),
                    meta.namespace(pod),
                    patch_type="strategic",
                )
            except StatusError as err:
                if is_not_found(err):
                    continue
                self._removing.discard(meta.uid(pod))
                log.info("removing the tracking finalizer of %s: %s", meta.key(pod), err)
                failed.add(meta.uid(pod))
        return failed

    async def _sync_orphan_pod(self, key: ObjectKey) -> None:
        pod = self._pods.lister.get(key.name, key.namespace)
        if pod is None or not ju.has_tracking_finalizer(pod):
            return
        if meta.controller_ref(pod) is not None and not job_uid_index(pod):
            return  # another controller's pod
        job = self._job_of(pod)
        if job is None and (ref := meta.controller_ref(pod)) is not None:
            # The Job's informer may lag behind the pod's: only the API server is sure.
            try:
                live = await self.client.get(JOBS, str(ref.get("name")), key.namespace)
            except StatusError as err:
                if not is_not_found(err):
                    raise
            else:
                job = live if meta.uid(live) == ref.get("uid") else None
        if job is not None and ju.finished_type(job) is None:
            return
        if await self._remove_finalizers([pod]):
            raise RuntimeError(f"could not remove the tracking finalizer of {key}")
