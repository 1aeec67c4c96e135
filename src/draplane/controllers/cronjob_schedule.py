"""CronJob schedules for the controller: `parse_schedule` (robfig/cron's standard parser, the
one in `draplane.api.cron` that validation uses too, in the CronJob's `timeZone`), the next and
the most recent missed schedule times, Job names and the Job made from the template
(pkg/controller/cronjob/utils.go).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from draplane.api import cron, meta
from draplane.api.meta import Obj
from draplane.clock import format_time, parse_time

SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1
"""Requeue this long after the next schedule time, so that the sync sees it as passed."""
MAX_MISSED = 100

ScheduleError = cron.CronError
"""An unparseable schedule, an unknown time zone, or a schedule that never fires."""


def time_zone(name: str | None) -> tzinfo:
    """The IANA zone `name`; none or "" is UTC (as the controller-manager runs)."""
    return UTC if not name else cron.load_zone(name)


@dataclass(frozen=True)
class Schedule:
    parsed: cron.Schedule
    zone: tzinfo

    def next(self, after: datetime) -> datetime:
        """The first schedule time strictly after `after`, in UTC."""
        found = self.parsed.next_after(after, self.zone)
        if found is None:
            raise ScheduleError("no schedule time within five years")
        return found.astimezone(UTC)


def parse_schedule(schedule: str, zone_name: str | None = None) -> Schedule:
    """cron.ParseStandard of the schedule, in `zone_name` (the CronJob's timeZone)."""
    return Schedule(cron.parse_schedule(schedule), time_zone(zone_name))


def most_recent_schedule_time(
    cronjob: Obj, now: datetime, schedule: Schedule, *, with_deadline: bool
) -> tuple[datetime, datetime | None, int]:
    """(earliest time considered, the most recent schedule time not after `now` or None, how
    many were missed), as mostRecentScheduleTime upstream."""
    md = meta.metadata(cronjob)
    status = cronjob.get("status") or {}
    earliest = parse_time(str(status.get("lastScheduleTime") or md.get("creationTimestamp")))
    deadline = (cronjob.get("spec") or {}).get("startingDeadlineSeconds")
    if with_deadline and deadline is not None:
        earliest = max(earliest, now - timedelta(seconds=int(deadline)))
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1)
    if now < t1:
        return earliest, None, 0
    if now < t2:
        return earliest, t1, 1
    interval = round((t2 - t1).total_seconds())
    if interval < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    missed = int((now - t1).total_seconds()) // interval + 1
    most_recent = t1
    t = t1 + timedelta(seconds=(missed - 1) * interval)
    if t > now:
        t = t1
    while t <= now:
        most_recent = t
        t = schedule.next(t)
    return earliest, most_recent, missed


def next_schedule_delay(cronjob: Obj, now: datetime, schedule: Schedule) -> float:
    """Seconds from `now` until just after the next schedule time (nextScheduleTimeDuration)."""
    earliest, most_recent, _ = most_recent_schedule_time(
        cronjob, now, schedule, with_deadline=False
    )
    upcoming = schedule.next(most_recent or earliest)
    return (upcoming - now).total_seconds() + NEXT_SCHEDULE_DELTA


def job_name(cronjob: Obj, scheduled: datetime) -> str:
    """`<cronjob>-<scheduled time in minutes since the epoch>` (getJobName)."""
    return f"{meta.name(cronjob)}-{int(scheduled.timestamp()) // 60}"


def job_from_template(cronjob: Obj, scheduled: datetime, zone: tzinfo) -> Obj:
    """getJobFromTemplate2: the jobTemplate's labels, annotations and spec, owned by the
    CronJob, named after the scheduled time, which it also carries as an annotation."""
    template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    template_md = template.get("metadata") or {}
    annotations = dict(template_md.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = scheduled.astimezone(zone).isoformat()
    if scheduled.astimezone(zone).utcoffset() == timedelta(0):
        annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = format_time(scheduled)
    md: Obj = {
        "name": job_name(cronjob, scheduled),
        "namespace": meta.namespace(cronjob),
        "annotations": annotations,
        "creationTimestamp": format_time(scheduled),
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": meta.name(cronjob),
                "uid": meta.uid(cronjob),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if template_md.get("labels"):
        md["labels"] = dict(template_md["labels"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": md,
        "spec": meta.deep_copy(template.get("spec") or {}),
    }
