"""CronJob schedules (`draplane.api.cron`): robfig/cron's ParseStandard errors and the next
activation after a time, in UTC and in a schedule's time zone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from draplane.api.cron import CronError, load_zone, parse_schedule

T0 = datetime(2026, 3, 2, 10, 7, 30, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        ("*/5 * * * *", T0, datetime(2026, 3, 2, 10, 10, tzinfo=UTC)),
        ("0 * * * *", T0, datetime(2026, 3, 2, 11, 0, tzinfo=UTC)),
        ("@hourly", T0, datetime(2026, 3, 2, 11, 0, tzinfo=UTC)),
        ("@daily", T0, datetime(2026, 3, 3, 0, 0, tzinfo=UTC)),
        ("30 9 * * mon-fri", T0, datetime(2026, 3, 3, 9, 30, tzinfo=UTC)),
        ("0 0 1 jan *", T0, datetime(2027, 1, 1, 0, 0, tzinfo=UTC)),
        # day-of-month and day-of-week both restricted: either one matches
        ("0 12 15 * 5", T0, datetime(2026, 3, 6, 12, 0, tzinfo=UTC)),
        (
            "7 10 * * *",
            datetime(2026, 3, 2, 10, 7, tzinfo=UTC),
            datetime(2026, 3, 3, 10, 7, tzinfo=UTC),
        ),
        ("TZ=Europe/Berlin 0 12 * * *", T0, datetime(2026, 3, 2, 11, 0, tzinfo=UTC)),
    ],
    ids=[
        "step",
        "hourly",
        "@hourly",
        "@daily",
        "weekdays",
        "yearly",
        "dom-or-dow",
        "strictly-after",
        "tz",
    ],
)
def test_next_after(schedule: str, after: datetime, expected: datetime) -> None:
    got = parse_schedule(schedule).next_after(after)
    assert got is not None and got.astimezone(UTC) == expected


def test_next_after_in_a_zone() -> None:
    got = parse_schedule("0 12 * * *").next_after(T0, load_zone("America/New_York"))
    assert got is not None and got.astimezone(UTC) == datetime(2026, 3, 2, 17, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("@often", "unrecognized descriptor: @often"),
    ],
)
def test_parse_errors(schedule: str, message: str) -> None:
    with pytest.raises(CronError) as err:
        parse_schedule(schedule)
    assert str(err.value) == message
