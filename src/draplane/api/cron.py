"""Cron schedules as CronJobs read them: robfig/cron v3's `ParseStandard` (five fields, or the
`@hourly`-style descriptors and `@every <duration>`), with its error messages, and `next_after`
(the first activation strictly after a time, in the schedule's zone).

A field is a comma-separated list of `*`, `?`, `N`, `A-B`, each optionally `/step`; months and
weekdays also take names (`jan`, `mon`). As in cron, when both day-of-month and day-of-week are
restricted a day matching either one is taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["CronError", "Schedule", "load_zone", "parse_schedule"]


class CronError(ValueError):
    """A schedule that does not parse; the message is robfig/cron's."""


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


_MINUTE = _Bounds(0, 59)
_HOUR = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTH = _Bounds(
    1,
    12,
    {
        m: i + 1
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        )
    },
)
_DOW = _Bounds(
    0, 6, {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
)
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
}  # fmt: skip


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    dom_star: bool = False
    dow_star: bool = False
    every: timedelta | None = None
    """`@every <duration>`: activations every duration (at least one second)."""
    zone: tzinfo | None = None
    """From a `TZ=`/`CRON_TZ=` prefix; None = the zone the caller passes."""

    def _day_matches(self, t: datetime) -> bool:
        dom = t.day in self.days
        dow = (t.isoweekday() % 7) in self.weekdays
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow

    def next_after(self, t: datetime, zone: tzinfo | None = None) -> datetime | None:
        """The first activation strictly after `t` (aware), in `zone` (or the schedule's TZ=,
        else t's own zone); None when none within five years."""
        if self.every is not None:
            step = max(self.every, timedelta(seconds=1))
            return (t + step).replace(microsecond=0)
        tz = self.zone or zone or t.tzinfo
        local = t.astimezone(tz).replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = local.year + 5
        while local.year <= limit:
            if local.month not in self.months:
                year, month = (
                    (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
                )
                local = local.replace(year=year, month=month, day=1, hour=0, minute=0)
                continue
            if not self._day_matches(local):
                local = (local + timedelta(days=1)).replace(hour=0, minute=0)
                continue
            if local.hour not in self.hours:
                local = (local + timedelta(hours=1)).replace(minute=0)
                continue
            if local.minute not in self.minutes:
                local = local + timedelta(minutes=1)
                continue
            return local.replace(tzinfo=tz) if tz is not None else local
        return None


def load_zone(name: str) -> tzinfo:
    """An IANA zone (`Etc/UTC`, `Europe/Berlin`); raises CronError as time.LoadLocation fails."""
    if name in ("", "UTC"):
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise CronError(f"unknown time zone {name}") from None


def _parse_int(expr: str) -> int:
    if not re.fullmatch(r"[+-]?\d+", expr):
        raise CronError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        )
    num = int(expr)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, bounds: _Bounds) -> int:
    if bounds.names is not None and expr.lower() in bounds.names:
        return bounds.names[expr.lower()]
    return _parse_int(expr)


def _range(expr: str, bounds: _Bounds) -> tuple[set[int], bool]:
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    star = low_high[0] in ("*", "?")
    if star:
        start, end = bounds.low, bounds.high
    else:
        start = _int_or_name(low_high[0], bounds)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], bounds)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _parse_int(range_and_step[1])
        if len(low_high) == 1:
            end = bounds.high  # "N/step" means "N-max/step"
        if step > 1:
            star = False
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise CronError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise CronError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _field(text: str, bounds: _Bounds) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in (p for p in text.split(",") if p):
        found, is_star = _range(part, bounds)
        values |= found
        star = star or is_star
    return frozenset(values), star


def _duration(text: str) -> timedelta:
    """Go's time.ParseDuration for the units cron accepts."""
    body = text.lstrip("+-")
    if body == "0":
        return timedelta(0)
    pos, total = 0, 0.0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if m is None:
            raise CronError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if not body:
        raise CronError(f'time: invalid duration "{text}"')
    return timedelta(seconds=-total if text.startswith("-") else total)


def parse_schedule(spec: str) -> Schedule:
    """cron.ParseStandard."""
    if not spec:
        raise CronError("empty spec string")
    zone: tzinfo | None = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        eq, space = spec.index("="), spec.find(" ")
        name = spec[eq + 1 : space] if space >= 0 else spec[eq + 1 :]
        try:
            zone = load_zone(name)
        except CronError as err:
            raise CronError(f"provided bad location {name}: {err}") from None
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        if spec.startswith("@every "):
            try:
                every = _duration(spec[len("@every ") :])
            except CronError as err:
                raise CronError(f"failed to parse duration {spec}: {err}") from None
            return Schedule(every=every, zone=zone)
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    minutes, _ = _field(fields[0], _MINUTE)
    hours, _ = _field(fields[1], _HOUR)
    days, dom_star = _field(fields[2], _DOM)
    months, _ = _field(fields[3], _MONTH)
    weekdays, dow_star = _field(fields[4], _DOW)
    return Schedule(minutes, hours, days, months, weekdays, dom_star, dow_star, None, zone)
