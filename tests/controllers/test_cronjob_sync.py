"""CronJob tables over pure functions: schedule parsing and next times (macros, time zones,
robfig/cron's day-of-month/day-of-week rule), missed schedules, startingDeadlineSeconds, each
concurrencyPolicy, suspend, history limits, Job names and the Job made from the template."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from draplane.api.meta import Obj
from draplane.controllers import job_util as ju
from draplane.controllers.cronjob_schedule import (
    SCHEDULED_TIMESTAMP_ANNOTATION,
    ScheduleError,
    job_from_template,
    job_name,
    most_recent_schedule_time,
    parse_schedule,
    time_zone,
)
from draplane.controllers.cronjob_sync import plan_cronjob

CREATED = "2026-01-01T00:00:00Z"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def cronjob(status: Obj | None = None, **spec: Any) -> Obj:
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "hello",
            "namespace": "default",
            "uid": "cj-uid",
            "creationTimestamp": CREATED,
        },
        "spec": {
            "schedule": "*/5 * * * *",
            "concurrencyPolicy": "Allow",
            "jobTemplate": {
                "metadata": {"labels": {"app": "hello"}},
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": []}}},
            },
            **spec,
        },
    }
    if status is not None:
        body["status"] = status
    return body


def job(name: str, finished: str | None = None, start: str = "2026-01-01T00:05:00Z") -> Obj:
    status: Obj = {"startTime": start}
    if finished:
        status["conditions"] = [{"type": finished, "status": "True"}]
        if finished == ju.COMPLETE:
            status["completionTime"] = start
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
        "status": status,
    }


def active(*names: str) -> Obj:
    return {"active": [{"kind": "Job", "name": n, "uid": f"{n}-uid"} for n in names]}


SCHEDULES = {
    "every five minutes": ("*/5 * * * *", None, at(1), at(5)),
    "@hourly": ("@hourly", None, at(1), at(60)),
    "@daily": ("@daily", None, at(1), at(24 * 60)),
    "@weekly is Sunday midnight": ("@weekly", None, at(0), datetime(2026, 1, 4, tzinfo=UTC)),
    "time zone": ("0 9 * * *", "Europe/Berlin", at(0), datetime(2026, 1, 1, 8, tzinfo=UTC)),
    "day of month or day of week when both are set": (
        "0 0 13 * 5",
        None,
        at(0),
        datetime(2026, 1, 2, tzinfo=UTC),  # a Friday, before the 13th
    ),
    "a star day of week restricts to day of month": (
        "0 0 13 * *",
        None,
        at(0),
        datetime(2026, 1, 13, tzinfo=UTC),
    ),
    "names": ("0 0 * JAN-FEB MON", None, at(0), datetime(2026, 1, 5, tzinfo=UTC)),
}


@pytest.mark.parametrize("expr,zone,after,want", SCHEDULES.values(), ids=SCHEDULES.keys())
def test_next(expr: str, zone: str | None, after: datetime, want: datetime) -> None:
    assert parse_schedule(expr, zone).next(after) == want


@pytest.mark.parametrize(
    "expr", ["* * * *", "0 0 L * *", "0 0 1W * *", "0 0 * * 1#2", "61 * * * *", "@reboot", ""]
)
def test_unparseable(expr: str) -> None:
    with pytest.raises(ScheduleError):
        parse_schedule(expr)


def test_unknown_time_zone() -> None:
    with pytest.raises(ScheduleError):
        time_zone("Mars/Olympus")


MISSED = {
    "before the first": ({}, {}, at(4), None, 0),
    "at the first": ({}, {}, at(5), at(5), 1),
    "several missed: the latest": ({}, {}, at(17), at(15), 3),
    "since lastScheduleTime": ({"lastScheduleTime": "2026-01-01T00:15:00Z"}, {}, at(19), None, 0),
    "startingDeadlineSeconds bounds the search": (
        {},
        {"startingDeadlineSeconds": 120},
        at(600),
        at(600),
        1,
    ),
}


@pytest.mark.parametrize("status,spec,now,want,missed", MISSED.values(), ids=MISSED.keys())
def test_most_recent(
    status: Obj, spec: Obj, now: datetime, want: datetime | None, missed: int
) -> None:
    cj = cronjob(status, **spec)
    _, found, count = most_recent_schedule_time(
        cj, now, parse_schedule("*/5 * * * *"), with_deadline=True
    )
    assert (found, count) == (want, missed)


@dataclass(frozen=True)
class Case:
    cronjob: Obj
    now: datetime
    jobs: list[Obj] = field(default_factory=list)
    gone: set[str] = field(default_factory=set)
    create: str | None = None
    replace: list[str] = field(default_factory=list)
    prune: list[str] = field(default_factory=list)
    active: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    requeue: float | None = None


CASES = {
    "not yet due": Case(cronjob(), at(3), requeue=120.1),
    "due: the Job is named after the minute": Case(
        cronjob(), at(5), create="hello-29453765", requeue=300.1
    ),
    "already scheduled at that time": Case(
        cronjob({"lastScheduleTime": "2026-01-01T00:05:00Z"}), at(6), requeue=240.1
    ),
    "suspended": Case(cronjob(suspend=True), at(5)),
    "Allow runs alongside an active Job": Case(
        cronjob(active("hello-1")),
        at(5),
        jobs=[job("hello-1")],
        create="hello-29453765",
        active=["hello-1"],
        requeue=300.1,
    ),
    "Forbid skips while a Job is active": Case(
        cronjob(active("hello-1"), concurrencyPolicy="Forbid"),
        at(5),
        jobs=[job("hello-1")],
        active=["hello-1"],
        events=["JobAlreadyActive"],
        requeue=300.1,
    ),
    "Replace deletes the active Job first": Case(
        cronjob(active("hello-1"), concurrencyPolicy="Replace"),
        at(5),
        jobs=[job("hello-1")],
        create="hello-29453765",
        replace=["hello-1"],
        active=["hello-1"],
        requeue=300.1,
    ),
    "a finished Job leaves the active list": Case(
        cronjob(active("hello-1"), concurrencyPolicy="Forbid"),
        at(5),
        jobs=[job("hello-1", ju.COMPLETE)],
        create="hello-29453765",
        events=["SawCompletedJob"],
        requeue=300.1,
    ),
    "a missing Job leaves the active list": Case(
        cronjob(active("hello-1")),
        at(3),
        gone={"hello-1-uid"},
        events=["MissingJob"],
        requeue=120.1,
    ),
    "an unknown unfinished Job is reported": Case(
        cronjob(), at(3), jobs=[job("stray")], events=["UnexpectedJob"], requeue=120.1
    ),
    "startingDeadlineSeconds passed: the missed run is skipped": Case(
        cronjob({"lastScheduleTime": "2026-01-01T00:05:00Z"}, startingDeadlineSeconds=30),
        at(11),
        requeue=240.1,
    ),
    "within startingDeadlineSeconds: runs late": Case(
        cronjob({"lastScheduleTime": "2026-01-01T00:05:00Z"}, startingDeadlineSeconds=90),
        at(11),
        create="hello-29453770",
        requeue=240.1,
    ),
    "too many missed start times": Case(
        cronjob(schedule="* * * * *"),
        at(200),
        create="hello-29453960",
        events=["TooManyMissedTimes"],
        requeue=60.1,
    ),
    "history limits delete the oldest finished Jobs": Case(
        cronjob(successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0),
        at(3),
        jobs=[
            job("ok-new", ju.COMPLETE, "2026-01-01T00:02:00Z"),
            job("ok-old", ju.COMPLETE, "2026-01-01T00:01:00Z"),
            job("bad", ju.FAILED),
        ],
        prune=["ok-old", "bad"],
        requeue=120.1,
    ),
    "unknown time zone": Case(cronjob(timeZone="Mars/Olympus"), at(5), events=["UnknownTimeZone"]),
    "unparseable schedule": Case(
        cronjob(schedule="every day"), at(5), events=["UnparseableSchedule"]
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_plan_cronjob(case: Case) -> None:
    plan = plan_cronjob(case.cronjob, case.jobs, case.now, case.gone)
    assert (plan.create or {}).get("metadata", {}).get("name") == case.create
    assert [j["metadata"]["name"] for j in plan.replace] == case.replace
    assert [j["metadata"]["name"] for j in plan.prune] == case.prune
    assert [r["name"] for r in plan.status.get("active") or []] == case.active
    assert [reason for _, reason, _ in plan.events] == case.events
    assert plan.requeue_after == (None if case.requeue is None else pytest.approx(case.requeue))


def test_last_successful_time_is_the_latest_completion() -> None:
    jobs = [job("a", ju.COMPLETE, "2026-01-01T00:02:00Z"), job("b", ju.COMPLETE, CREATED)]
    plan = plan_cronjob(cronjob(), jobs, at(3), set())
    assert plan.status["lastSuccessfulTime"] == "2026-01-01T00:02:00Z"


@pytest.mark.parametrize(
    "zone,stamp",
    [(None, "2026-01-01T00:05:00Z"), ("Europe/Berlin", "2026-01-01T01:05:00+01:00")],
)
def test_job_from_template(zone: str | None, stamp: str) -> None:
    cj = cronjob()
    body = job_from_template(cj, at(5), time_zone(zone))
    md = body["metadata"]
    assert md["name"] == job_name(cj, at(5)) == "hello-29453765"
    assert md["labels"] == {"app": "hello"}
    assert md["annotations"] == {SCHEDULED_TIMESTAMP_ANNOTATION: stamp}
    assert md["ownerReferences"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": "hello",
            "uid": "cj-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert body["spec"] == cj["spec"]["jobTemplate"]["spec"]
