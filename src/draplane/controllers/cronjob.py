"""The CronJob controller (batch/v1): creates Jobs on schedule, on the injected clock.

Handlers enqueue the CronJob of a Job that appeared, changed or went away; workers run
`sync(key)`: `cronjob_sync.plan_cronjob`, then the deletes, the create and the status write it
asks for. Every sync requeues the CronJob for just after its next schedule time.
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_already_exists, is_not_found
from draplane.api.kinds import CRON_JOBS, JOBS
from draplane.api.meta import Obj
from draplane.client.events import NORMAL, WARNING
from draplane.client.informer import Informer, unwrap
from draplane.client.mutationcache import MutationCache
from draplane.controllers.context import ControllerContext
from draplane.controllers.cronjob_sync import CronPlan, drop_active, plan_cronjob, record_created
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.controllers.workload import controller_uid_of, is_namespace_terminating

log = logging.getLogger(__name__)

QUEUE_NAME = "cronjob"
WORKERS = 5
CRONJOB_UID_INDEX = "cronjob-controller-uid"
CRONJOB = "CronJob"


cronjob_uid_index = controller_uid_of(CRONJOB, "batch/v1")


class CronJobController(QueueController):
    NAME = "cronjob-controller"
    QUEUE_NAME = QUEUE_NAME

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self._cronjobs = ctx.informers.informer(CRON_JOBS)
        # The CronJob as last written, until the informer has it: the Job it just created
        # triggers a sync that must see that Job in `status.active`.
        self._written = MutationCache(self._cronjobs.lister, max_entries=1000, clock=self.clock)
        self._jobs = ctx.informers.informer(JOBS, indexers={CRONJOB_UID_INDEX: cronjob_uid_index})
        self._cronjobs.add_handler(on_add=self._enqueue, on_update=lambda _, cj: self._enqueue(cj))
        self._jobs.add_handler(
            on_add=self._enqueue_owner,
            on_update=lambda _, job: self._enqueue_owner(job),
            on_delete=lambda job: self._enqueue_owner(unwrap(job)),
        )

    def informers(self) -> tuple[Informer, ...]:
        return (self._cronjobs, self._jobs)

    def _enqueue(self, cronjob: Obj) -> None:
        self.queue.add(ObjectKey.of(CRONJOB, cronjob))

    def _enqueue_owner(self, job: Obj) -> None:
        ref = meta.controller_ref(job)
        if ref is not None and cronjob_uid_index(job):
            self.queue.add(ObjectKey(CRONJOB, meta.namespace(job), str(ref.get("name"))))

    async def sync(self, key: ObjectKey) -> None:
        cronjob = self._written.get(key.name, key.namespace)
        if cronjob is None:
            return
        jobs = self._jobs.lister.by_index(CRONJOB_UID_INDEX, meta.uid(cronjob))
        gone = await self._gone(cronjob, jobs)
        plan = plan_cronjob(cronjob, jobs, self.clock.now(), gone)
        error: Exception | None = None
        try:
            await self._act(cronjob, plan)
        except (StatusError, RuntimeError) as err:
            error = err
        for job in plan.prune:
            if await self._delete_job(cronjob, job):
                drop_active(plan, job)
        if (cronjob.get("status") or {}) != plan.status:
            updated = meta.deep_copy(cronjob)
            updated["status"] = plan.status
            cronjob = await self.client.update(CRON_JOBS, updated, subresource="status")
            self._written.mutation(cronjob)
        for type_, reason, message in plan.events:
            self.recorder.event(cronjob, type_, reason, message)
        if plan.requeue_after is not None:
            self.queue.add_after(key, plan.requeue_after)
        if error is not None:
            raise error

    async def _gone(self, cronjob: Obj, jobs: list[Obj]) -> set[str]:
        """Active UIDs with no Job in the cache: asked of the API server, whose answer counts."""
        cached = {meta.uid(j) for j in jobs}
        gone: set[str] = set()
        for ref in (cronjob.get("status") or {}).get("active") or []:
            if ref.get("uid") in cached:
                continue
            try:
                live = await self.client.get(JOBS, str(ref.get("name")), meta.namespace(cronjob))
            except StatusError as err:
                if not is_not_found(err):
                    raise
                gone.add(str(ref.get("uid")))
                continue
            if meta.uid(live) != ref.get("uid"):
                gone.add(str(ref.get("uid")))
        return gone

    async def _act(self, cronjob: Obj, plan: CronPlan) -> None:
        for job in plan.replace:
            if not await self._delete_job(cronjob, job):
                raise RuntimeError(f"could not replace job {meta.key(job)}")
            drop_active(plan, job)
        if plan.create is None:
            return
        body = plan.create
        scheduled = str(body["metadata"]["creationTimestamp"])
        try:
            created = await self.client.create(JOBS, body, meta.namespace(cronjob))
        except StatusError as err:
            if not is_already_exists(err):
                if not is_namespace_terminating(err):
                    self.recorder.event(
                        cronjob, WARNING, "FailedCreate", f"Error creating job: {err}"
                    )
                raise
            created = await self.client.get(JOBS, meta.name(body), meta.namespace(cronjob))
            ref = meta.controller_ref(created) or {}
            if ref.get("uid") != meta.uid(cronjob):
                raise
            log.info("Job %s already exists", meta.key(created))
        else:
            self.recorder.event(
                cronjob, NORMAL, "SuccessfulCreate", f"Created job {meta.name(created)}"
            )
        record_created(plan, created, scheduled)

    async def _delete_job(self, cronjob: Obj, job: Obj) -> bool:
        try:
            await self.client.delete(
                JOBS,
                meta.name(job),
                meta.namespace(job),
                propagation_policy="Background",
                preconditions={"uid": meta.uid(job)},
            )
        except StatusError as err:
            if not is_not_found(err):
                self.recorder.event(cronjob, WARNING, "FailedDelete", f"Deleted job: {err}")
                return False
        self.recorder.event(cronjob, NORMAL, "SuccessfulDelete", f"Deleted job {meta.name(job)}")
        return True
