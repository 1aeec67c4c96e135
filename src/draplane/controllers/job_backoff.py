"""The Job controller's pod-creation back-off after failures (backoff_utils.go): 10 s doubling
per failure since the last success, at most 10 minutes, from when the last failure finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from draplane.api.meta import Obj
from draplane.controllers import job_util as ju

DEFAULT_BACKOFF = 10.0
MAX_BACKOFF = 600.0


def backoff_delay(failures_after_success: int) -> float:
    """10 s doubling per failure since the last success, at most 10 minutes; 0 without one."""
    if failures_after_success <= 0:
        return 0.0
    return min(DEFAULT_BACKOFF * 2.0 ** (failures_after_success - 1), MAX_BACKOFF)


@dataclass(frozen=True)
class BackoffRecord:
    """Failures since the last success and when the last of them finished (backoff_utils.go)."""

    failures_after_success: int = 0
    last_failure: datetime | None = None

    def remaining(self, now: datetime) -> float:
        delay = backoff_delay(self.failures_after_success)
        if delay <= 0 or self.last_failure is None:
            return 0.0
        elapsed = (now - self.last_failure).total_seconds()
        return max(0.0, delay - elapsed)


def next_backoff(
    record: BackoffRecord, succeeded: list[Obj], failed: list[Obj], now: datetime
) -> BackoffRecord:
    """newBackoffRecord: failures count up; a success resets, keeping failures after it."""
    fail_times = sorted(ju.finish_time(p, now) for p in failed)
    if not succeeded:
        if not fail_times:
            return record
        return BackoffRecord(record.failures_after_success + len(fail_times), fail_times[-1])
    last_success = max(ju.finish_time(p, now) for p in succeeded)
    after = [t for t in fail_times if t > last_success]
    return BackoffRecord(len(after), after[-1] if after else None)
