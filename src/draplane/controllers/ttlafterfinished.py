"""The TTL-after-finished controller: deletes finished Jobs `ttlSecondsAfterFinished` after
their `Complete` or `Failed` condition (pkg/controller/ttlafterfinished).

A Job is queued when it finishes; the sync requeues it for its expiry on the injected clock,
then re-reads it from the API server, checks again, and deletes it with propagationPolicy
Foreground and a UID precondition, so that its pods (and their claims) go first.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from draplane.api import meta
from draplane.api.errors import StatusError, is_conflict, is_not_found
from draplane.api.kinds import JOBS
from draplane.api.meta import Obj
from draplane.client.informer import Informer
from draplane.clock import parse_time
from draplane.controllers import job_util as ju
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController

log = logging.getLogger(__name__)

QUEUE_NAME = "ttl_jobs_to_delete"
WORKERS = 5


def expires_at(job: Obj) -> datetime | None:
    """When a finished Job with a TTL expires; None if it has no TTL, is not finished or is
    already being deleted."""
    ttl = ju.spec(job).get("ttlSecondsAfterFinished")
    finished = ju.finished_type(job)
    if ttl is None or finished is None or meta.deletion_timestamp(job):
        return None
    cond = ju.find_condition(job, finished) or {}
    stamp = cond.get("lastTransitionTime") or (job.get("status") or {}).get("completionTime")
    if not stamp:
        return None
    return parse_time(str(stamp)) + timedelta(seconds=int(ttl))


class TTLAfterFinishedController(QueueController):
    NAME = "ttl-after-finished-controller"
    QUEUE_NAME = QUEUE_NAME

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self._jobs = ctx.informers.informer(JOBS)
        self._jobs.add_handler(on_add=self._enqueue, on_update=lambda _, job: self._enqueue(job))

    def informers(self) -> tuple[Informer, ...]:
        return (self._jobs,)

    def _enqueue(self, job: Obj) -> None:
        if expires_at(job) is not None:
            self.queue.add(ObjectKey.of("Job", job))

    async def sync(self, key: ObjectKey) -> None:
        job = self._jobs.lister.get(key.name, key.namespace)
        if job is None or not self._expired(key, job):
            return
        # The cache may be stale (the TTL changed, the Job was recreated): check the live Job.
        try:
            fresh = await self.client.get(JOBS, key.name, key.namespace)
        except StatusError as err:
            if is_not_found(err):
                return
            raise
        if not self._expired(key, fresh):
            return
        log.info("Cleaning up Job %s/%s: its TTL expired", key.namespace, key.name)
        try:
            await self.client.delete(
                JOBS,
                key.name,
                key.namespace,
                propagation_policy="Foreground",
                preconditions={"uid": meta.uid(fresh)},
            )
        except StatusError as err:
            if not (is_not_found(err) or is_conflict(err)):
                raise

    def _expired(self, key: ObjectKey, job: Obj) -> bool:
        expiry = expires_at(job)
        if expiry is None:
            return False
        left = (expiry - self.clock.now()).total_seconds()
        if left > 0:
            self.queue.add_after(key, left)
            return False
        return True
