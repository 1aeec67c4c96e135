"""`backoffLimitPerIndex` for Indexed Jobs: each index may fail that many times before it is
marked failed (`status.failedIndexes`) and not retried; a retry of an index waits out that
index's own back-off (indexed_job_utils.go and backoff_utils.go upstream).

A pod carries how often its index failed before it, in the annotation
`batch.kubernetes.io/job-index-failure-count`; the next pod of that index gets one more.
"""

from __future__ import annotations

from datetime import datetime

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers import job_util as ju
from draplane.controllers.job_backoff import backoff_delay

FAILURE_COUNT_ANNOTATION = ju.INDEX_FAILURE_COUNT


def failure_count(pod: Obj) -> int:
    value = meta.annotations(pod).get(FAILURE_COUNT_ANNOTATION) or "0"
    return int(value) if value.isdigit() else 0


def last_failed_by_index(job: Obj, pods: list[Obj], now: datetime) -> dict[int, Obj]:
    """The most recently finished failed pod of each index."""
    out: dict[int, Obj] = {}
    for pod in pods:
        index = ju.valid_index(pod, job)
        if index is None or not ju.is_pod_failed(pod, job):
            continue
        current = out.get(index)
        if current is None or ju.finish_time(pod, now) >= ju.finish_time(current, now):
            out[index] = pod
    return out


def failed_indexes(job: Obj, pods: list[Obj], limit: int, fail_index: set[str]) -> set[int]:
    """Indexes already failed, and those whose failed pod used up the limit (or matched a
    FailIndex rule: pod UIDs in `fail_index`)."""
    total = ju.completions(job)
    out = ju.parse_intervals((job.get("status") or {}).get("failedIndexes"), total)
    for pod in pods:
        index = ju.valid_index(pod, job)
        if index is None or ju.phase(pod) != "Failed":
            continue
        uid = str((pod.get("metadata") or {}).get("uid"))
        if failure_count(pod) >= limit or uid in fail_index:
            out.add(index)
    return out


def next_failure_counts(
    job: Obj, pods: list[Obj], indexes: list[int], now: datetime
) -> tuple[dict[int, int], float | None]:
    """For the indexes about to get a pod: their failure-count annotations, and the seconds
    to wait for indexes still in their back-off (left out of the result)."""
    last = last_failed_by_index(job, pods, now)
    counts: dict[int, int] = {}
    wait: float | None = None
    for index in indexes:
        failed = last.get(index)
        if failed is None:
            counts[index] = 0
            continue
        failures = failure_count(failed) + 1
        elapsed = (now - ju.finish_time(failed, now)).total_seconds()
        left = backoff_delay(failures) - elapsed
        if left > 0:
            wait = left if wait is None else min(wait, left)
            continue
        counts[index] = failures
    return counts, wait
