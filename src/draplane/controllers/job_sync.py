"""One Job sync as a pure function: `plan_sync(job, pods, ...)` says which pods to create and
delete, which pods lose the tracking finalizer and the status to write first; `flush_status`
is the status after the finalizers are gone (syncJob, manageJob and
trackJobStatusAndRemoveFinalizers of pkg/controller/job/job_controller.go, 1.34).

A finished pod is counted in three steps, so that it is counted exactly once even if the
controller stops half way: its UID goes into `status.uncountedTerminatedPods`, its finalizer is
removed, then the UID moves into `succeeded` or `failed`. A finish condition first appears as
`SuccessCriteriaMet` or `FailureTarget`; `Complete` or `Failed` follow once nothing is uncounted
and no pod is terminating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import format_time, parse_time
from draplane.controllers import job_failurepolicy, job_perindex, job_util as ju
from draplane.controllers.job_backoff import BackoffRecord, next_backoff

NO_BACKOFF = BackoffRecord()


@dataclass
class JobPlan:
    status: Obj
    """The status to write before any finalizer is removed."""
    create: list[int | None] = field(default_factory=list)
    """One entry per pod to create: its completion index (None for NonIndexed Jobs)."""
    delete: list[Obj] = field(default_factory=list)
    finalize: list[Obj] = field(default_factory=list)
    """Pods whose `batch.kubernetes.io/job-tracking` finalizer is removed."""
    finished: Obj | None = None
    """The `Complete` or `Failed` condition to add once nothing is uncounted or terminating."""
    events: list[tuple[str, str, str]] = field(default_factory=list)
    index_failures: dict[int, int] = field(default_factory=dict)
    """backoffLimitPerIndex: the failure-count annotation of each index's new pod."""
    requeue_after: float | None = None
    backoff: BackoffRecord = field(default_factory=BackoffRecord)

    def failures_of(self, index: int | None) -> int | None:
        return None if index is None else self.index_failures.get(index)

    def requeue(self, seconds: float) -> None:
        seconds = max(seconds, 0.0)
        self.requeue_after = (
            seconds if self.requeue_after is None else min(self.requeue_after, seconds)
        )


def _uncounted(status: Obj) -> tuple[set[str], set[str]]:
    entry = status.get("uncountedTerminatedPods") or {}
    return set(entry.get("succeeded") or []), set(entry.get("failed") or [])


def _action(job: Obj, pod: Obj) -> str:
    """The podFailurePolicy action for a failed pod ("" for any other pod)."""
    if not ju.is_pod_failed(pod, job):
        return ""
    action, _ = job_failurepolicy.match(ju.spec(job).get("podFailurePolicy"), pod)
    return action


def _counts_as_failed(job: Obj, pod: Obj) -> bool:
    """A failed pod whose podFailurePolicy action is not Ignore."""
    return _action(job, pod) not in ("", job_failurepolicy.IGNORE)


def _failed_indexes_condition(
    job: Obj, failed: set[int], succeeded: set[int], now: datetime
) -> Obj | None:
    """backoffLimitPerIndex: too many failed indexes, or every index succeeded or failed."""
    limit = ju.spec(job).get("maxFailedIndexes")
    if limit is not None and len(failed) > int(limit):
        reason, message = ju.REASON_MAX_FAILED_INDEXES, ju.MESSAGE_MAX_FAILED_INDEXES
    elif failed and len(failed) + len(succeeded) >= (ju.completions(job) or 0):
        reason, message = ju.REASON_FAILED_INDEXES, ju.MESSAGE_FAILED_INDEXES
    else:
        return None
    return ju.new_condition(ju.FAILURE_TARGET, "True", reason, message, now)


def _per_index_backoff(
    plan: JobPlan, job: Obj, pods: list[Obj], failed: set[int], now: datetime
) -> None:
    """Failed indexes get no pod; the others wait out their own back-off."""
    if ju.backoff_limit_per_index(job) is None or not plan.create:
        return
    wanted = [i for i in plan.create if i is not None and i not in failed]
    counts, wait = job_perindex.next_failure_counts(job, pods, wanted, now)
    plan.create = [i for i in wanted if i in counts]
    plan.index_failures = counts
    if wait is not None:
        plan.requeue(wait)


def _fail_job_message(job: Obj, pods: list[Obj]) -> str:
    """The message of the first failed pod matching a FailJob rule, else ""."""
    policy = ju.spec(job).get("podFailurePolicy")
    if not policy:
        return ""
    for pod in pods:
        if ju.is_pod_failed(pod, job):
            action, message = job_failurepolicy.match(policy, pod)
            if action == job_failurepolicy.FAIL_JOB:
                return message
    return ""


def _past_backoff_limit_on_failure(job: Obj, pods: list[Obj]) -> bool:
    if ju.restart_policy(job) != "OnFailure":
        return False
    restarts = sum(ju.restart_count(p) for p in pods if ju.phase(p) in ("Running", "Pending"))
    limit = ju.backoff_limit(job)
    return restarts > 0 if limit == 0 else restarts >= limit


def _past_deadline(job: Obj, status: Obj, now: datetime) -> tuple[bool, float | None]:
    """(passed, seconds left) for activeDeadlineSeconds; never while suspended."""
    deadline = ju.spec(job).get("activeDeadlineSeconds")
    start = status.get("startTime")
    if deadline is None or not start or ju.is_suspended(job):
        return False, None
    left = float(deadline) - (now - parse_time(start)).total_seconds()
    return left <= 0, left


def plan_sync(
    job: Obj,
    pods: list[Obj],
    *,
    now: datetime,
    backoff: BackoffRecord = NO_BACKOFF,
    satisfied: bool = True,
    expected_removals: frozenset[str] = frozenset(),
) -> JobPlan:
    """Everything one sync does to `job` and its `pods` (the pods it controls).

    `satisfied`: earlier creates and deletes have been observed, so pods may be created or
    deleted; `expected_removals`: pod UIDs whose finalizer removal is not yet observed.
    """
    status = meta.deep_copy(job.get("status") or {})
    plan = JobPlan(status=status, backoff=backoff)
    tracked = [
        p for p in pods if ju.has_tracking_finalizer(p) and meta.uid(p) not in expected_removals
    ]
    if ju.finished_type(job) is not None or ju.spec(job).get("managedBy") not in (
        None,
        "kubernetes.io/job-controller",
    ):
        if ju.finished_type(job) is not None:
            plan.finalize = tracked
        return plan

    suspended = ju.is_suspended(job)
    if not status.get("startTime") and not suspended:
        status["startTime"] = format_time(now)
    unc_succeeded, unc_failed = _uncounted(status)
    indexed = ju.is_indexed(job)
    total = ju.completions(job)
    prev_indexes = ju.parse_intervals(status.get("completedIndexes"), total) if indexed else set()

    def new_pod(p: Obj) -> bool:
        uid = meta.uid(p)
        if uid in unc_succeeded or uid in unc_failed:
            return False
        return not indexed or ju.valid_index(p, job) is not None

    new_succeeded = [p for p in tracked if ju.phase(p) == "Succeeded" and new_pod(p)]
    new_failed = [p for p in tracked if _counts_as_failed(job, p) and new_pod(p)]
    if indexed:
        new_succeeded = [p for p in new_succeeded if ju.valid_index(p, job) not in prev_indexes]
    succeeded = int(status.get("succeeded") or 0) + len(unc_succeeded) + len(new_succeeded)
    failed = int(status.get("failed") or 0) + len(unc_failed) + len(new_failed)
    plan.backoff = next_backoff(backoff, new_succeeded, new_failed, now)
    active_pods = [p for p in pods if ju.is_active(p)]
    active = len(active_pods)
    terminating = sum(1 for p in pods if ju.is_terminating(p))
    ready = sum(1 for p in active_pods if ju.is_ready(p))

    succeeded_indexes = set(prev_indexes)
    if indexed:
        succeeded_indexes |= {
            i
            for p in pods
            if ju.phase(p) == "Succeeded" and (i := ju.valid_index(p, job)) is not None
        }
    if indexed and total is not None:
        succeeded = max(succeeded, len(succeeded_indexes))
    per_index = ju.backoff_limit_per_index(job) if indexed and total is not None else None
    failed_indexes: set[int] = set()
    if per_index is not None:
        fail_index = {
            meta.uid(p) for p in tracked if _action(job, p) == job_failurepolicy.FAIL_INDEX
        }
        failed_indexes = job_perindex.failed_indexes(job, pods, per_index, fail_index)
        succeeded_indexes -= failed_indexes

    # The finish condition, first match wins.
    interim: Obj | None = None
    if (cond := ju.find_condition(job, ju.SUCCESS_CRITERIA_MET)) is not None:
        plan.finished = ju.new_condition(ju.COMPLETE, "True", cond["reason"], cond["message"], now)
    elif (cond := ju.find_condition(job, ju.FAILURE_TARGET)) is not None:
        plan.finished = ju.new_condition(ju.FAILED, "True", cond["reason"], cond["message"], now)
    elif message := _fail_job_message(job, tracked):
        interim = ju.new_condition(
            ju.FAILURE_TARGET, "True", ju.REASON_POD_FAILURE_POLICY, message, now
        )
    elif failed > ju.backoff_limit(job) or _past_backoff_limit_on_failure(job, pods):
        interim = ju.new_condition(
            ju.FAILURE_TARGET, "True", ju.REASON_BACKOFF_LIMIT, ju.MESSAGE_BACKOFF_LIMIT, now
        )
    else:
        passed, left = _past_deadline(job, status, now)
        if passed:
            interim = ju.new_condition(
                ju.FAILURE_TARGET, "True", ju.REASON_DEADLINE, ju.MESSAGE_DEADLINE, now
            )
        elif left is not None:
            plan.requeue(left)
    if per_index is not None and interim is None and plan.finished is None:
        interim = _failed_indexes_condition(job, failed_indexes, succeeded_indexes, now)

    if interim is not None or plan.finished is not None:
        plan.delete = active_pods[: ju.MAX_POD_CREATE_DELETE_PER_SYNC]
    elif satisfied and not meta.deletion_timestamp(job):
        indexes = (succeeded_indexes, failed_indexes)
        _manage(plan, job, active_pods, succeeded, indexes, terminating, now)
        _per_index_backoff(plan, job, pods, failed_indexes, now)
        complete = (succeeded > 0 if total is None else succeeded >= total) and (
            active - len(plan.delete) + len(plan.create) == 0
        )
        if complete:
            interim = ju.new_condition(
                ju.SUCCESS_CRITERIA_MET,
                "True",
                ju.REASON_COMPLETIONS_REACHED,
                ju.MESSAGE_COMPLETIONS_REACHED,
                now,
            )
        else:
            _suspend_conditions(plan, job, now)
    active += len(plan.create) - len(plan.delete)
    terminating += len(plan.delete)

    _track_finished_pods(plan, job, tracked, prev_indexes, succeeded_indexes, interim)
    if interim is not None:
        status["conditions"] = [*(status.get("conditions") or []), interim]
        final_type = ju.COMPLETE if interim["type"] == ju.SUCCESS_CRITERIA_MET else ju.FAILED
        plan.finished = ju.new_condition(
            final_type, "True", interim["reason"], interim["message"], now
        )
    if indexed:
        status["completedIndexes"] = ju.format_intervals(succeeded_indexes)
    if per_index is not None:
        status["failedIndexes"] = ju.format_intervals(failed_indexes)
    status["active"] = active
    status["ready"] = ready
    status["terminating"] = terminating
    status.setdefault("succeeded", 0)
    status.setdefault("failed", 0)
    return plan


def _manage(
    plan: JobPlan,
    job: Obj,
    active_pods: list[Obj],
    succeeded: int,
    indexes: tuple[set[int], set[int]],
    terminating: int,
    now: datetime,
) -> None:
    """manageJob: delete pods of a suspended Job or surplus pods, else create missing ones.
    `indexes`: the succeeded and the failed indexes of an Indexed Job."""
    succeeded_indexes, failed_indexes = indexes
    active = len(active_pods)
    cap = ju.MAX_POD_CREATE_DELETE_PER_SYNC
    if ju.is_suspended(job):
        plan.delete = ju.pods_for_removal(active_pods, active)[:cap]
        return
    total = ju.completions(job)
    parallelism = ju.parallelism(job)
    if total is None:
        want = active if succeeded > 0 else parallelism
    else:
        want = max(0, min(total - succeeded, parallelism))
    if ju.is_indexed(job) and total is not None:
        # Duplicate pods of one index, and pods of indexes already succeeded, go first.
        seen: set[int] = set()
        surplus: list[Obj] = []
        for pod in sorted(
            active_pods, key=lambda p: str(meta.metadata(p).get("creationTimestamp"))
        ):
            index = ju.valid_index(pod, job)
            if index is None or index in seen or index in succeeded_indexes:
                surplus.append(pod)
            else:
                seen.add(index)
        if surplus:
            plan.delete = surplus[:cap]
            return
    plan.delete = ju.pods_for_removal(active_pods, active - want)[:cap]
    if plan.delete:
        return
    waiting = terminating if ju.only_replace_failed_pods(job) else 0
    missing = min(want - waiting - active, cap)
    if missing <= 0:
        return
    per_index = ju.backoff_limit_per_index(job) is not None
    remaining = 0.0 if per_index else plan.backoff.remaining(now)
    if remaining > 0:
        plan.requeue(remaining)
        return
    if ju.is_indexed(job) and total is not None:
        active_indexes = {i for p in active_pods if (i := ju.valid_index(p, job)) is not None}
        plan.create = list(
            ju.first_pending_indexes(
                total,
                missing,
                succeeded=succeeded_indexes,
                active=active_indexes,
                failed=failed_indexes,
            )
        )
    else:
        plan.create = [None] * missing


def _suspend_conditions(plan: JobPlan, job: Obj, now: datetime) -> None:
    status = plan.status
    conds = status.get("conditions") or []
    if ju.is_suspended(job):
        updated, changed = ju.ensure_condition(
            conds, ju.SUSPENDED, "True", "JobSuspended", "Job suspended", now
        )
        if changed:
            plan.events.append(("Normal", "Suspended", "Job suspended"))
    else:
        updated, changed = ju.ensure_condition(
            conds, ju.SUSPENDED, "False", "JobResumed", "Job resumed", now
        )
        if changed:
            plan.events.append(("Normal", "Resumed", "Job resumed"))
            # activeDeadlineSeconds counts the time a Job is continuously active.
            status["startTime"] = format_time(now)
    if changed:
        status["conditions"] = updated


def _track_finished_pods(
    plan: JobPlan,
    job: Obj,
    tracked: list[Obj],
    prev_indexes: set[int],
    succeeded_indexes: set[int],
    interim: Obj | None,
) -> None:
    """Record finished pods as uncounted and mark them for finalizer removal."""
    status = plan.status
    unc_succeeded, unc_failed = _uncounted(status)
    finishing = interim is not None or plan.finished is not None
    failing = finishing and not (
        (interim or {}).get("type") == ju.SUCCESS_CRITERIA_MET
        or (plan.finished or {}).get("type") == ju.COMPLETE
    )
    indexed = ju.is_indexed(job)
    counted_indexes = set(prev_indexes)
    removable = finishing or bool(meta.deletion_timestamp(job))
    for pod in tracked:
        uid = meta.uid(pod)
        considered_failed = ju.is_pod_failed(pod, job)
        succeeded = ju.phase(pod) == "Succeeded"
        if not (removable or succeeded or considered_failed):
            continue
        plan.finalize.append(pod)
        index = ju.valid_index(pod, job)
        if succeeded and uid not in unc_failed:
            if not indexed:
                unc_succeeded.add(uid)
            elif index is not None and (index not in counted_indexes or uid in unc_succeeded):
                counted_indexes.add(index)
                unc_succeeded.add(uid)
        elif (
            (considered_failed or failing)
            and uid not in unc_succeeded
            and (not indexed or index is not None)
            and (not considered_failed or _counts_as_failed(job, pod))
        ):
            unc_failed.add(uid)
        if len(unc_succeeded) + len(unc_failed) >= ju.MAX_UNCOUNTED_PODS:
            break
    if indexed:
        succeeded_indexes |= counted_indexes
    status["uncountedTerminatedPods"] = {
        "succeeded": sorted(unc_succeeded),
        "failed": sorted(unc_failed),
    }
