"""CronJob schedules: parsing (5-field cron and the `@hourly`-style macros, in the CronJob's
`timeZone`), the next and the most recent missed schedule times, Job names and the Job made
from the template (pkg/controller/cronjob/utils.go; robfig/cron's standard parser, through
`croniter`, see docs/dependencies.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import format_time

SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1
"""Requeue this long after the next schedule time, so that the sync sees it as passed."""
MAX_MISSED = 100
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


_NAMES = re.compile(r"JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|SUN|MON|TUE|WED|THU|FRI|SAT")


class ScheduleError(ValueError):
    """An unparseable schedule or an unknown time zone."""


def time_zone(name: str | None) -> tzinfo:
    """The IANA zone `name`; none or "" is UTC (as the controller-manager runs)."""
    if not name:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise ScheduleError(f"unknown time zone {name}") from err


@dataclass(frozen=True)
class Schedule:
    expression: str
    zone: tzinfo

    def next(self, after: datetime) -> datetime:
        """The first schedule time strictly after `after` (whole seconds, UTC)."""
        start = after.astimezone(self.zone).replace(microsecond=0)
        found: datetime = croniter(self.expression, start).get_next(datetime)
        return found.astimezone(UTC)


def parse_schedule(schedule: str, zone_name: str | None = None) -> Schedule:
    """robfig/cron's ParseStandard: five fields, or a macro."""
    expression = " ".join(schedule.split())
    expression = MACROS.get(expression.lower(), expression)
    fields = expression.split(" ")
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {schedule}")
    bare = _NAMES.sub("", expression.upper())
    if any(c in bare for c in "LWH#"):
        # croniter extensions robfig/cron does not have.
        raise ScheduleError(f"unsupported characters in schedule: {schedule}")
    if not croniter.is_valid(expression):
        raise ScheduleError(f"unparseable schedule: {schedule}")
    return Schedule(expression, time_zone(zone_name))


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def most_recent_schedule_time(
    cronjob: Obj, now: datetime, schedule: Schedule, *, with_deadline: bool
) -> tuple[datetime, datetime | None, int]:
    """(earliest time considered, the most recent schedule time not after `now` or None, how
    many were missed), as mostRecentScheduleTime upstream."""
    md = meta.metadata(cronjob)
    status = cronjob.get("status") or {}
    earliest = _parse(status.get("lastScheduleTime") or md.get("creationTimestamp"))
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
