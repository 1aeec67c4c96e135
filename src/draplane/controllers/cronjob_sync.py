"""One CronJob sync as a pure function: `plan_cronjob(cronjob, jobs, now)` reconciles
`status.active` with the CronJob's Jobs, decides whether a Job is due (schedule, suspend,
startingDeadlineSeconds, concurrencyPolicy) and which finished Jobs exceed the history limits
(syncCronJob and cleanupFinishedJobs of pkg/controller/cronjob/cronjob_controllerv2.go).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import format_time
from draplane.controllers import job_util as ju
from draplane.controllers.cronjob_schedule import (
    MAX_MISSED,
    ScheduleError,
    job_from_template,
    job_name,
    most_recent_schedule_time,
    next_schedule_delay,
    parse_schedule,
    time_zone,
)

Event = tuple[str, str, str]


@dataclass
class CronPlan:
    status: Obj
    create: Obj | None = None
    """The Job to create."""
    replace: list[Obj] = field(default_factory=list)
    """Active Jobs to delete before creating (concurrencyPolicy Replace)."""
    prune: list[Obj] = field(default_factory=list)
    """Finished Jobs beyond the history limits, oldest first."""
    events: list[Event] = field(default_factory=list)
    requeue_after: float | None = None


def job_ref(job: Obj) -> Obj:
    md = meta.metadata(job)
    return {
        "kind": "Job",
        "namespace": md.get("namespace"),
        "name": md.get("name"),
        "uid": md.get("uid"),
        "apiVersion": "batch/v1",
        "resourceVersion": md.get("resourceVersion"),
    }


def _start_key(job: Obj) -> tuple[int, str, str]:
    """byJobStartTime: by status.startTime (Jobs without one last), then name."""
    start = (job.get("status") or {}).get("startTime")
    return (0 if start else 1, str(start or ""), meta.name(job))


def _history(cronjob: Obj, jobs: list[Obj]) -> list[Obj]:
    spec = cronjob.get("spec") or {}
    limits = {
        ju.COMPLETE: spec.get("successfulJobsHistoryLimit"),
        ju.FAILED: spec.get("failedJobsHistoryLimit"),
    }
    out: list[Obj] = []
    for type_, limit in limits.items():
        if limit is None:
            continue
        finished = sorted((j for j in jobs if ju.finished_type(j) == type_), key=_start_key)
        out.extend(finished[: max(0, len(finished) - int(limit))])
    return out


def _reconcile_active(plan: CronPlan, jobs: list[Obj], gone: set[str]) -> None:
    status = plan.status
    active: list[Obj] = list(status.get("active") or [])
    active_uids = {ref.get("uid") for ref in active}
    for job in jobs:
        finished = ju.finished_type(job)
        if meta.uid(job) not in active_uids and finished is None:
            plan.events.append(
                (
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {meta.name(job)}",
                )
            )
        elif meta.uid(job) in active_uids and finished is not None:
            active = [ref for ref in active if ref.get("uid") != meta.uid(job)]
            plan.events.append(
                (
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {meta.name(job)}, condition: {finished}",
                )
            )
        completion = (job.get("status") or {}).get("completionTime")
        if finished == ju.COMPLETE and completion:
            last = status.get("lastSuccessfulTime")
            if not last or completion > last:
                status["lastSuccessfulTime"] = completion
    for ref in list(active):
        if ref.get("uid") in gone:
            active.remove(ref)
            plan.events.append(
                ("Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
            )
    if active:
        status["active"] = active
    else:
        status.pop("active", None)


def plan_cronjob(cronjob: Obj, jobs: list[Obj], now: datetime, gone: set[str]) -> CronPlan:
    """`jobs`: the Jobs this CronJob controls; `gone`: UIDs in `status.active` whose Job the
    API server does not have."""
    spec = cronjob.get("spec") or {}
    plan = CronPlan(status=meta.deep_copy(cronjob.get("status") or {}))
    _reconcile_active(plan, jobs, gone)
    plan.prune = _history(cronjob, jobs)
    if meta.deletion_timestamp(cronjob) or spec.get("suspend"):
        return plan
    zone_name = spec.get("timeZone")
    try:
        zone = time_zone(zone_name)
    except ScheduleError as err:
        plan.events.append(
            ("Warning", "UnknownTimeZone", f'invalid timeZone: "{zone_name}": {err}')
        )
        return plan
    try:
        schedule = parse_schedule(str(spec.get("schedule") or ""), zone_name)
    except ScheduleError as err:
        message = f'unparseable schedule: "{spec.get("schedule")}" : {err}'
        plan.events.append(("Warning", "UnparseableSchedule", message))
        return plan
    view = {**cronjob, "status": plan.status}
    try:
        _, scheduled, missed = most_recent_schedule_time(view, now, schedule, with_deadline=True)
        plan.requeue_after = next_schedule_delay(view, now, schedule)
    except ScheduleError as err:
        message = f"invalid schedule: {spec.get('schedule')} : {err}"
        plan.events.append(("Warning", "InvalidSchedule", message))
        return plan
    if scheduled is None:
        return plan
    if missed > MAX_MISSED:
        plan.events.append(
            (
                "Warning",
                "TooManyMissedTimes",
                f"too many missed start times: {missed}. Set or decrease "
                ".spec.startingDeadlineSeconds or check clock skew",
            )
        )
    deadline = spec.get("startingDeadlineSeconds")
    if deadline is not None and scheduled + timedelta(seconds=int(deadline)) < now:
        stamp = format_datetime(scheduled, usegmt=False).replace("-0000", "+0000")
        plan.events.append(
            ("Warning", "MissSchedule", f"Missed scheduled time to start a job: {stamp}")
        )
        return plan
    name = job_name(cronjob, scheduled)
    active = plan.status.get("active") or []
    if any(ref.get("name") == name for ref in active) or plan.status.get(
        "lastScheduleTime"
    ) == format_time(scheduled):
        return plan
    policy = spec.get("concurrencyPolicy") or "Allow"
    if policy == "Forbid" and active:
        plan.events.append(
            (
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy "
                "is Forbid",
            )
        )
        return plan
    if policy == "Replace":
        by_uid = {meta.uid(j): j for j in jobs}
        plan.replace = [by_uid[ref["uid"]] for ref in active if ref.get("uid") in by_uid]
    plan.create = job_from_template(cronjob, scheduled, zone)
    return plan


def record_created(plan: CronPlan, job: Obj, scheduled: str) -> None:
    """After the create: the Job is active and `lastScheduleTime` is its scheduled time."""
    active = [r for r in plan.status.get("active") or [] if r.get("uid") != meta.uid(job)]
    plan.status["active"] = [*active, job_ref(job)]
    plan.status["lastScheduleTime"] = scheduled


def drop_active(plan: CronPlan, job: Obj) -> None:
    active = [r for r in plan.status.get("active") or [] if r.get("uid") != meta.uid(job)]
    if active:
        plan.status["active"] = active
    else:
        plan.status.pop("active", None)
