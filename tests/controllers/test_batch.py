"""The Job, CronJob and TTL-after-finished controllers (and the garbage collector) running
against the in-process API server on a FakeClock, as their own service accounts. No kubelet:
the tests write pod status as the kubelet would."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from draplane.api import errors, meta
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.kinds import CRON_JOBS, EVENTS, JOBS, PODS
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.client.workqueue import RateLimitingQueue
from draplane.controllers import job_util as ju
from draplane.controllers.context import ControllerContext
from draplane.controllers.cronjob import CronJobController
from draplane.controllers.garbagecollector import GarbageCollector
from draplane.controllers.job import JobController
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.ttlafterfinished import TTLAfterFinishedController
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_cron_job, make_job
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster

START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Batch:
    cluster: Cluster
    clock: FakeClock
    client: Client
    jobs: JobController
    cronjobs: CronJobController
    ttl: TTLAfterFinishedController

    async def delayed(self, queue: RateLimitingQueue[ObjectKey], kind: str, name: str) -> None:
        """Wait until the controller requeued `name` for later (a timer on the FakeClock)."""
        key = ObjectKey(kind, "default", name)
        await wait_for(lambda: queue.is_waiting(key), what=f"{key} requeued")

    async def create(self, obj: Obj) -> Obj:
        body = meta.deep_copy(obj)
        body["metadata"].pop("uid", None)
        rt = JOBS if body["kind"] == "Job" else CRON_JOBS
        return await self.client.create(rt, body, "default")

    async def job(self, name: str) -> Obj:
        return await self.client.get(JOBS, name, "default")

    async def pods(self, job: Obj, *, active_only: bool = False) -> list[Obj]:
        items = (await self.client.list(PODS, "default"))["items"]
        owned = [p for p in items if (meta.controller_ref(p) or {}).get("uid") == meta.uid(job)]
        return [p for p in owned if ju.is_active(p)] if active_only else owned

    async def active(self, job: Obj, count: int) -> list[Obj]:
        async def probe() -> list[Obj] | None:
            pods = await self.pods(job, active_only=True)
            return pods if len(pods) == count else None

        return await wait_for(probe, what=f"{count} active pods")

    async def finish(self, pod: Obj, phase: str, *, restarts: int = 0) -> None:
        """Write a terminal status as the kubelet would."""
        live = meta.deep_copy(await self.client.get(PODS, meta.name(pod), "default"))
        live["status"] = {**(live.get("status") or {}), "phase": phase}
        if restarts:
            live["status"]["containerStatuses"] = [{"name": "ctr", "restartCount": restarts}]
        await self.client.update(PODS, live, subresource="status")

    async def condition(self, name: str, type_: str) -> Obj:
        async def probe() -> Obj | None:
            return ju.find_condition(await self.job(name), type_)

        return await wait_for(probe, what=f"{name} {type_}")

    async def events(self, reason: str) -> list[str]:
        items = (await self.client.list(EVENTS, "default"))["items"]
        return [e["message"] for e in items if e["reason"] == reason]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def cluster_options(clock: FakeClock) -> dict[str, Any]:
    return {"clock": clock}


@pytest.fixture
async def batch(cluster: Cluster, clock: FakeClock) -> AsyncIterator[Batch]:
    factory = InformerFactory(cluster.client(UserInfo(CONTROLLER_MANAGER)), clock=clock)
    immediate = ItemExponentialFailureRateLimiter(base=0, cap=0)

    def client(name: str) -> Client:
        return cluster.client(controller_user(name))

    jobs = JobController(
        ControllerContext.of(client("job-controller"), factory, clock=clock, rate_limiter=immediate)
    )
    cronjobs = CronJobController(
        ControllerContext.of(
            client("cronjob-controller"), factory, clock=clock, rate_limiter=immediate
        )
    )
    ttl = TTLAfterFinishedController(
        ControllerContext.of(
            client("ttl-after-finished-controller"), factory, clock=clock, rate_limiter=immediate
        )
    )
    gc = GarbageCollector(
        ControllerContext.of(client("generic-garbage-collector"), factory, clock=clock)
    )
    controllers = [jobs, cronjobs, ttl, gc]
    await factory.start()
    tasks = [asyncio.create_task(c.run()) for c in controllers]
    try:
        yield Batch(cluster, clock, cluster.client(), jobs, cronjobs, ttl)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await factory.stop()


async def test_completions_and_parallelism(batch: Batch) -> None:
    job = await batch.create(make_job("pi").completions(4).parallelism(2).obj())
    for _ in range(2):
        pods = await batch.active(job, 2)
        for pod in pods:
            assert ju.JOB_TRACKING_FINALIZER in meta.finalizers(pod)
            assert meta.labels(pod)[ju.JOB_NAME_LABEL] == "pi"
            assert meta.labels(pod)[ju.CONTROLLER_UID_LABEL] == meta.uid(job)
            await batch.finish(pod, "Succeeded")
    complete = await batch.condition("pi", ju.COMPLETE)
    status = (await batch.job("pi"))["status"]
    assert complete["reason"] == ju.REASON_COMPLETIONS_REACHED
    assert ju.find_condition({"status": status}, ju.SUCCESS_CRITERIA_MET) is not None
    assert (status["succeeded"], status["failed"], status["active"]) == (4, 0, 0)
    assert status["completionTime"] == status["startTime"] == "2026-01-01T00:00:00Z"
    assert status["uncountedTerminatedPods"] == {"succeeded": [], "failed": []}
    pods = await batch.pods(job)
    assert len(pods) == 4
    assert all(not meta.finalizers(p) for p in pods)
    await batch.jobs.recorder.flush()
    assert len(await batch.events("SuccessfulCreate")) == 4
    assert await batch.events("Completed") == ["Job completed"]


async def test_indexed(batch: Batch) -> None:
    job = await batch.create(
        make_job("idx").completions(3).parallelism(3).completion_mode("Indexed").obj()
    )
    pods = await batch.active(job, 3)
    by_index = {meta.annotations(p)[ju.COMPLETION_INDEX]: p for p in pods}
    assert sorted(by_index) == ["0", "1", "2"]
    assert by_index["1"]["spec"]["hostname"] == "idx-1"
    assert meta.labels(by_index["1"])[ju.COMPLETION_INDEX] == "1"
    await batch.finish(by_index["0"], "Failed")
    # Index 0 is retried once the back-off (10 s) is waited out.
    await batch.delayed(batch.jobs.queue, "Job", "idx")
    await batch.active(job, 2)
    batch.clock.step(10)
    pods = await batch.active(job, 3)
    assert sorted(meta.annotations(p)[ju.COMPLETION_INDEX] for p in pods) == ["0", "1", "2"]
    for pod in pods:
        await batch.finish(pod, "Succeeded")
    await batch.condition("idx", ju.COMPLETE)
    status = (await batch.job("idx"))["status"]
    assert (status["completedIndexes"], status["succeeded"], status["failed"]) == ("0-2", 3, 1)


async def test_backoff_limit_exceeded(batch: Batch) -> None:
    job = await batch.create(make_job("flaky").backoff_limit(1).obj())
    [pod] = await batch.active(job, 1)
    await batch.finish(pod, "Failed")
    await batch.delayed(batch.jobs.queue, "Job", "flaky")
    assert await batch.pods(job, active_only=True) == []
    batch.clock.step(10)
    [pod] = await batch.active(job, 1)
    await batch.finish(pod, "Failed")
    failed = await batch.condition("flaky", ju.FAILED)
    assert (failed["reason"], failed["message"]) == (
        ju.REASON_BACKOFF_LIMIT,
        ju.MESSAGE_BACKOFF_LIMIT,
    )
    status = (await batch.job("flaky"))["status"]
    assert ju.find_condition({"status": status}, ju.FAILURE_TARGET) is not None
    assert (status["failed"], status["succeeded"]) == (2, 0)
    assert "completionTime" not in status
    await batch.jobs.recorder.flush()
    assert await batch.events(ju.REASON_BACKOFF_LIMIT) == [ju.MESSAGE_BACKOFF_LIMIT]


async def test_active_deadline(batch: Batch) -> None:
    job = await batch.create(make_job("slow").active_deadline_seconds(30).obj())
    await batch.active(job, 1)
    await batch.delayed(batch.jobs.queue, "Job", "slow")
    batch.clock.step(30)
    failed = await batch.condition("slow", ju.FAILED)
    assert failed["reason"] == ju.REASON_DEADLINE
    # The active pod was deleted; it never reached the kubelet, so it went at once.
    assert await batch.pods(job) == []
    assert (await batch.job("slow"))["status"]["failed"] == 1


async def test_suspend_and_resume(batch: Batch) -> None:
    job = await batch.create(make_job("later").suspend().obj())
    await batch.condition("later", ju.SUSPENDED)
    assert await batch.pods(job) == []
    assert "startTime" not in (await batch.job("later"))["status"]
    batch.clock.step(60)
    live = meta.deep_copy(await batch.job("later"))
    live["spec"]["suspend"] = False
    await batch.client.update(JOBS, live)
    await batch.active(job, 1)

    async def resumed() -> Obj | None:
        status = (await batch.job("later"))["status"]
        cond = next(c for c in status["conditions"] if c["type"] == ju.SUSPENDED)
        return status if cond["status"] == "False" else None

    status = await wait_for(resumed, what="resumed")
    assert status["startTime"] == "2026-01-01T00:01:00Z"


async def test_deleted_pod_is_replaced_and_counted_failed(batch: Batch) -> None:
    job = await batch.create(make_job("replace").obj())
    [pod] = await batch.active(job, 1)
    await batch.client.delete(PODS, meta.name(pod), "default")
    # A deletion is a failure: the replacement waits out the back-off.
    await batch.delayed(batch.jobs.queue, "Job", "replace")
    batch.clock.step(10)
    [replacement] = await batch.active(job, 1)
    assert meta.uid(replacement) != meta.uid(pod)

    async def counted() -> bool:
        return (await batch.job("replace"))["status"].get("failed") == 1

    await wait_for(counted, what="failed counted")
    assert [meta.uid(p) for p in await batch.pods(job)] == [meta.uid(replacement)]


async def test_ttl_after_finished(batch: Batch) -> None:
    job = await batch.create(make_job("short").ttl_seconds_after_finished(60).obj())
    [pod] = await batch.active(job, 1)
    await batch.finish(pod, "Succeeded")
    await batch.condition("short", ju.COMPLETE)
    await batch.delayed(batch.ttl.queue, "Job", "short")
    batch.clock.step(59)
    await batch.delayed(batch.ttl.queue, "Job", "short")
    assert meta.name(await batch.job("short")) == "short"
    batch.clock.step(1)

    async def gone() -> bool:
        try:
            await batch.job("short")
        except errors.StatusError as err:
            return errors.is_not_found(err)
        return False

    await wait_for(gone, what="job deleted")
    assert await batch.pods(job) == []


async def test_cronjob_schedules_jobs(batch: Batch) -> None:
    cj = make_cron_job("tick", schedule="*/1 * * * *").concurrency_policy("Forbid")
    cronjob = await batch.create(cj.history_limits(1, 1).obj())
    await batch.delayed(batch.cronjobs.queue, "CronJob", "tick")
    assert (await batch.client.list(JOBS, "default"))["items"] == []
    batch.clock.step(61)  # requeued for just after the minute
    name = f"tick-{int(START.timestamp()) // 60 + 1}"

    async def scheduled(job_name: str) -> Obj | None:
        live = await batch.client.get(CRON_JOBS, "tick", "default")
        names = [r["name"] for r in (live.get("status") or {}).get("active") or []]
        return live if job_name in names else None

    live = await wait_for(lambda: scheduled(name), what="first job")
    assert live["status"]["lastScheduleTime"] == "2026-01-01T00:01:00Z"
    first = await batch.job(name)
    assert (meta.controller_ref(first) or {})["uid"] == meta.uid(cronjob)
    # Forbid: the next minute passes while the first Job runs.
    await batch.delayed(batch.cronjobs.queue, "CronJob", "tick")
    batch.clock.step(60)
    await wait_for(lambda: batch.events("JobAlreadyActive"), what="the run skipped")
    assert [meta.name(j) for j in (await batch.client.list(JOBS, "default"))["items"]] == [name]
    [pod] = await batch.active(first, 1)
    await batch.finish(pod, "Succeeded")
    await batch.condition(name, ju.COMPLETE)
    # The run Forbid skipped at 00:02 is still due: it starts, late, once the first Job is done.
    second = f"tick-{int(START.timestamp()) // 60 + 2}"
    live = await wait_for(lambda: scheduled(second), what="second job")
    assert live["status"]["lastScheduleTime"] == "2026-01-01T00:02:00Z"
    [pod] = await batch.active(await batch.job(second), 1)
    await batch.finish(pod, "Succeeded")
    await batch.condition(second, ju.COMPLETE)

    # History limit 1: the first (oldest) finished Job is deleted.
    async def pruned() -> bool:
        names = [meta.name(j) for j in (await batch.client.list(JOBS, "default"))["items"]]
        return names == [second]

    await wait_for(pruned, what="history pruned")
    live = await batch.client.get(CRON_JOBS, "tick", "default")
    assert "active" not in live["status"]
    assert live["status"]["lastSuccessfulTime"] == "2026-01-01T00:02:01Z"
