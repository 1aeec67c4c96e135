"""Job controller reconcile tables over pure functions: counting, parallelism, Indexed
bookkeeping, back-off, backoffLimit, activeDeadlineSeconds, suspend/resume, finalizers, flush."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from draplane.api.meta import Obj
from draplane.controllers import job_util as ju
from draplane.controllers.job_backoff import BackoffRecord, backoff_delay, next_backoff
from draplane.controllers.job_flush import flush_status
from draplane.controllers.job_sync import plan_sync
from draplane.testing.builders import make_pod

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
STAMP = "2026-01-01T12:00:00Z"
JOB_UID = "job-uid"


def job(status: Obj | None = None, **spec: Any) -> Obj:
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": JOB_UID},
        "spec": {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "template": {
                "metadata": {"labels": {ju.JOB_NAME_LABEL: "pi"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "perl"}],
                },
            },
            **spec,
        },
    }
    if status is not None:
        body["status"] = status
    return body


def pod(
    name: str,
    phase: str = "Running",
    *,
    index: int | None = None,
    ready: bool = False,
    deleted: bool = False,
    finalizer: bool = True,
    restarts: int = 0,
    created: str = "2026-01-01T11:00:00Z",
    exit_code: int | None = None,
    condition: str = "",
    finished_at: str = STAMP,
    failures: int | None = None,
) -> Obj:
    builder = make_pod(name).uid(name).owner("Job", "pi", JOB_UID, api_version="batch/v1")
    builder.phase(phase).set("metadata.creationTimestamp", created)
    if finalizer:
        builder.finalizer(ju.JOB_TRACKING_FINALIZER)
    if index is not None:
        builder.annotation(ju.COMPLETION_INDEX, str(index))
    if ready:
        builder.condition("Ready", "True")
    if deleted:
        builder.deletion_timestamp(STAMP)
    if restarts:
        builder.set("status.containerStatuses", [{"name": "ctr", "restartCount": restarts}])
    if exit_code is not None:
        state = {"terminated": {"exitCode": exit_code, "finishedAt": finished_at}}
        builder.set("status.containerStatuses", [{"name": "ctr", "state": state}])
    if condition:
        builder.condition(condition, "True")
    if failures is not None:
        builder.annotation(ju.INDEX_FAILURE_COUNT, str(failures))
    return builder.obj()


EARLIER = "2026-01-01T11:59:00Z"
PER_INDEX = {
    "completions": 2,
    "parallelism": 2,
    "completionMode": "Indexed",
    "backoffLimitPerIndex": 1,
    "backoffLimit": 2**31 - 1,
}
FAIL_ON_42 = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
IGNORE_DISRUPTION = {
    "rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    ]
}


def counted(succeeded: int = 0, failed: int = 0, **extra: Any) -> Obj:
    return {
        "startTime": "2026-01-01T11:00:00Z",
        "succeeded": succeeded,
        "failed": failed,
        **extra,
    }


@dataclass(frozen=True)
class Case:
    job: Obj
    pods: list[Obj] = field(default_factory=list)
    create: list[int | None] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    finalize: list[str] = field(default_factory=list)
    uncounted: tuple[list[str], list[str]] = ([], [])
    active: int = 0
    interim: str | None = None
    """The type and reason of a condition added before the finalizers go."""
    finished: str | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    failures: dict[int, int] = field(default_factory=dict)
    backoff: BackoffRecord = field(default_factory=BackoffRecord)
    prior: BackoffRecord = field(default_factory=BackoffRecord)
    requeue: float | None = None
    events: list[str] = field(default_factory=list)


CASES = {
    "new job creates one pod per parallelism": Case(
        job(completions=4, parallelism=2), create=[None, None], active=2
    ),
    "work queue job: parallelism pods": Case(
        job(completions=None, parallelism=3), create=[None] * 3, active=3
    ),
    "running pods are enough": Case(
        job(counted(), completions=4, parallelism=2),
        pods=[pod("a"), pod("b")],
        active=2,
    ),
    "a succeeded pod is recorded and replaced": Case(
        job(counted(), completions=4, parallelism=2),
        pods=[pod("a", "Succeeded"), pod("b")],
        create=[None],
        finalize=["a"],
        uncounted=(["a"], []),
        active=2,
    ),
    "remaining completions bound the active pods": Case(
        job(counted(succeeded=3), completions=4, parallelism=2),
        pods=[pod("a"), pod("b", created="2026-01-01T11:30:00Z")],
        delete=["b"],
        active=1,
    ),
    "all completions reached: success criteria met": Case(
        job(counted(succeeded=3), completions=4, parallelism=2),
        pods=[pod("a", "Succeeded")],
        finalize=["a"],
        uncounted=(["a"], []),
        interim=f"{ju.SUCCESS_CRITERIA_MET}/{ju.REASON_COMPLETIONS_REACHED}",
        finished=ju.COMPLETE,
    ),
    "work queue job completes at its first success": Case(
        job(counted(), completions=None, parallelism=2),
        pods=[pod("a", "Succeeded"), pod("b", "Succeeded")],
        finalize=["a", "b"],
        uncounted=(["a", "b"], []),
        interim=f"{ju.SUCCESS_CRITERIA_MET}/{ju.REASON_COMPLETIONS_REACHED}",
        finished=ju.COMPLETE,
    ),
    "a failed pod starts the back-off": Case(
        job(counted(), completions=2),
        pods=[pod("a", "Failed")],
        finalize=["a"],
        uncounted=([], ["a"]),
        backoff=BackoffRecord(1, NOW),
        requeue=10.0,
    ),
    "the back-off doubles and is waited out": Case(
        job(counted(failed=2)),
        pods=[pod("c", "Failed")],
        finalize=["c"],
        uncounted=([], ["c"]),
        prior=BackoffRecord(2, NOW - timedelta(seconds=100)),
        backoff=BackoffRecord(3, NOW),
        requeue=40.0,
    ),
    "a deleted pod counts as failed and is replaced at once": Case(
        job(counted()),
        pods=[pod("a", deleted=True)],
        finalize=["a"],
        uncounted=([], ["a"]),
        backoff=BackoffRecord(1, datetime(2026, 1, 1, 12, tzinfo=UTC)),
        requeue=10.0,
    ),
    "backoffLimit exceeded: failure target, active pods deleted": Case(
        job(counted(failed=2), backoffLimit=2, parallelism=2, completions=3),
        pods=[pod("a", "Failed"), pod("b")],
        delete=["b"],
        finalize=["a", "b"],
        uncounted=([], ["a", "b"]),
        interim=f"{ju.FAILURE_TARGET}/{ju.REASON_BACKOFF_LIMIT}",
        finished=ju.FAILED,
        backoff=BackoffRecord(1, NOW),
    ),
    "OnFailure restarts reach backoffLimit": Case(
        job(
            counted(),
            backoffLimit=2,
            template={"spec": {"restartPolicy": "OnFailure", "containers": []}},
        ),
        pods=[pod("a", restarts=2)],
        delete=["a"],
        finalize=["a"],
        uncounted=([], ["a"]),
        interim=f"{ju.FAILURE_TARGET}/{ju.REASON_BACKOFF_LIMIT}",
        finished=ju.FAILED,
    ),
    "activeDeadlineSeconds passed": Case(
        job(counted(), activeDeadlineSeconds=60),
        pods=[pod("a")],
        delete=["a"],
        finalize=["a"],
        uncounted=([], ["a"]),
        interim=f"{ju.FAILURE_TARGET}/{ju.REASON_DEADLINE}",
        finished=ju.FAILED,
    ),
    "activeDeadlineSeconds ahead: requeued for it": Case(
        job(counted(), activeDeadlineSeconds=4000),
        pods=[pod("a")],
        active=1,
        requeue=400.0,
    ),
    "an existing failure target fails once nothing is left": Case(
        job(
            counted(
                failed=1,
                conditions=[
                    ju.new_condition(
                        ju.FAILURE_TARGET, "True", ju.REASON_DEADLINE, ju.MESSAGE_DEADLINE, NOW
                    )
                ],
            )
        ),
        finished=ju.FAILED,
    ),
    "podFailurePolicy FailJob on an exit code": Case(
        job(counted(), parallelism=2, completions=2, podFailurePolicy=FAIL_ON_42),
        pods=[pod("a", "Failed", exit_code=42), pod("b")],
        delete=["b"],
        finalize=["a", "b"],
        uncounted=([], ["a", "b"]),
        interim=f"{ju.FAILURE_TARGET}/{ju.REASON_POD_FAILURE_POLICY}",
        finished=ju.FAILED,
        backoff=BackoffRecord(1, NOW),
    ),
    "podFailurePolicy Ignore: not counted, replaced at once": Case(
        job(counted(), podFailurePolicy=IGNORE_DISRUPTION),
        pods=[pod("a", "Failed", condition="DisruptionTarget")],
        create=[None],
        finalize=["a"],
        active=1,
    ),
    "podFailurePolicy without a match counts the failure": Case(
        job(counted(), podFailurePolicy=FAIL_ON_42),
        pods=[pod("a", "Failed", exit_code=1)],
        finalize=["a"],
        uncounted=([], ["a"]),
        backoff=BackoffRecord(1, NOW),
        requeue=10.0,
    ),
    "suspended: active pods deleted, condition set": Case(
        job(counted(), suspend=True, parallelism=2, completions=2),
        pods=[pod("a"), pod("b", ready=True)],
        delete=["a", "b"],
        events=["Suspended"],
    ),
    "resumed: condition flips, startTime reset, pods created": Case(
        job(
            counted(
                conditions=[
                    ju.new_condition(ju.SUSPENDED, "True", "JobSuspended", "Job suspended", NOW)
                ]
            ),
            suspend=False,
        ),
        create=[None],
        active=1,
        events=["Resumed"],
    ),
    "Indexed: lowest pending indexes, completed ones kept": Case(
        job(
            counted(succeeded=1, completedIndexes="1"),
            completions=4,
            parallelism=3,
            completionMode="Indexed",
        ),
        pods=[pod("p0", index=0), pod("p3", "Succeeded", index=3)],
        create=[2],
        finalize=["p3"],
        uncounted=(["p3"], []),
        completed_indexes="1,3",
        active=2,
    ),
    "Indexed: a duplicate of an index is deleted first": Case(
        job(counted(), completions=2, parallelism=2, completionMode="Indexed"),
        pods=[pod("p0", index=0), pod("p0b", index=0, created="2026-01-01T11:30:00Z")],
        delete=["p0b"],
        completed_indexes="",
        active=1,
    ),
    "Indexed: a second success of one index is not counted": Case(
        job(counted(succeeded=1, completedIndexes="0"), completions=2, completionMode="Indexed"),
        pods=[pod("p0", "Succeeded", index=0), pod("p1", index=1)],
        finalize=["p0"],
        completed_indexes="0",
        active=1,
    ),
    "backoffLimitPerIndex: a failed index waits out its own back-off": Case(
        job(counted(), **PER_INDEX),
        pods=[pod("p0", "Failed", index=0, exit_code=1), pod("p1", index=1)],
        finalize=["p0"],
        uncounted=([], ["p0"]),
        completed_indexes="",
        failed_indexes="",
        active=1,
        backoff=BackoffRecord(1, NOW),
        requeue=10.0,
    ),
    "backoffLimitPerIndex: then it is retried with its failure count": Case(
        job(counted(failed=1), **PER_INDEX),
        pods=[
            pod("p0", "Failed", index=0, exit_code=1, finalizer=False, finished_at=EARLIER),
            pod("p1", index=1),
        ],
        create=[0],
        failures={0: 1},
        completed_indexes="",
        failed_indexes="",
        active=2,
    ),
    "backoffLimitPerIndex: an index out of retries fails the Job once the rest is done": Case(
        job(counted(), **PER_INDEX),
        pods=[
            pod("p0", "Failed", index=0, exit_code=1, failures=1),
            pod("p1", "Succeeded", index=1),
        ],
        finalize=["p0", "p1"],
        uncounted=(["p1"], ["p0"]),
        interim=f"{ju.FAILURE_TARGET}/{ju.REASON_FAILED_INDEXES}",
        finished=ju.FAILED,
        completed_indexes="1",
        failed_indexes="0",
        backoff=BackoffRecord(0, None),
    ),
    "maxFailedIndexes exceeded": Case(
        job(counted(), **PER_INDEX, maxFailedIndexes=0),
        pods=[pod("p0", "Failed", index=0, exit_code=1, failures=1), pod("p1", index=1)],
        delete=["p1"],
        finalize=["p0", "p1"],
        uncounted=([], ["p0", "p1"]),
        interim=f"{ju.FAILURE_TARGET}/{ju.REASON_MAX_FAILED_INDEXES}",
        finished=ju.FAILED,
        completed_indexes="",
        failed_indexes="0",
        backoff=BackoffRecord(1, NOW),
    ),
    "finished job: finalizers removed, nothing else": Case(
        job(
            counted(
                succeeded=1,
                conditions=[ju.new_condition(ju.COMPLETE, "True", "CompletionsReached", "", NOW)],
            )
        ),
        pods=[pod("a", "Succeeded"), pod("b", "Succeeded", finalizer=False)],
        finalize=["a"],
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_plan_sync(case: Case) -> None:
    plan = plan_sync(case.job, case.pods, now=NOW, backoff=case.prior)
    assert plan.create == case.create
    assert sorted(p["metadata"]["name"] for p in plan.delete) == case.delete
    assert sorted(p["metadata"]["name"] for p in plan.finalize) == case.finalize
    if ju.finished_type(case.job) is not None:
        assert plan.status == case.job["status"]
        return
    unc = plan.status["uncountedTerminatedPods"]
    assert (unc["succeeded"], unc["failed"]) == case.uncounted
    assert plan.status["active"] == case.active
    added = [
        c
        for c in plan.status.get("conditions") or []
        if c not in (case.job.get("status") or {}).get("conditions", [])
    ]
    interim = [f"{c['type']}/{c['reason']}" for c in added if c["type"] != ju.SUSPENDED]
    assert interim == ([case.interim] if case.interim else [])
    assert (plan.finished or {}).get("type") == case.finished
    assert plan.status.get("completedIndexes") == case.completed_indexes
    assert plan.status.get("failedIndexes") == case.failed_indexes
    assert plan.index_failures == case.failures
    assert plan.backoff == case.backoff
    assert plan.requeue_after == case.requeue
    assert [reason for _, reason, _ in plan.events] == case.events


def test_not_satisfied_expectations_create_nothing() -> None:
    plan = plan_sync(job(completions=4, parallelism=2), [], now=NOW, satisfied=False)
    assert plan.create == []
    assert plan.status["active"] == 0


def test_expected_finalizer_removals_are_not_counted_again() -> None:
    pods = [pod("a", "Succeeded")]
    plan = plan_sync(job(counted(succeeded=1)), pods, now=NOW, expected_removals=frozenset("a"))
    assert plan.finalize == []
    assert plan.status["uncountedTerminatedPods"] == {"succeeded": [], "failed": []}
    assert plan.finished is not None and plan.finished["type"] == ju.COMPLETE


def test_resume_resets_start_time() -> None:
    suspended = ju.new_condition(ju.SUSPENDED, "True", "JobSuspended", "Job suspended", NOW)
    plan = plan_sync(job(counted(conditions=[suspended])), [], now=NOW)
    assert plan.status["startTime"] == STAMP
    cond = next(c for c in plan.status["conditions"] if c["type"] == ju.SUSPENDED)
    assert (cond["status"], cond["reason"]) == ("False", "JobResumed")


def test_suspended_job_has_no_start_time() -> None:
    plan = plan_sync(job(suspend=True), [], now=NOW)
    assert "startTime" not in plan.status


FLUSHES = {
    "uncounted move into the counters, Complete follows": (
        {"succeeded": 3, "failed": 0, "uncountedTerminatedPods": {"succeeded": ["a"]}},
        set(),
        ju.COMPLETE,
        {"succeeded": 4, "failed": 0, "complete": True, "events": ["Completed"]},
    ),
    "a pod still tracked stays uncounted, no finish yet": (
        {"succeeded": 0, "failed": 0, "uncountedTerminatedPods": {"succeeded": ["a", "b"]}},
        {"b"},
        ju.COMPLETE,
        {"succeeded": 1, "failed": 0, "complete": False, "events": []},
    ),
    "terminating pods hold back Failed": (
        {"failed": 0, "terminating": 1, "uncountedTerminatedPods": {"failed": ["a"]}},
        set(),
        ju.FAILED,
        {"succeeded": 0, "failed": 1, "complete": False, "events": []},
    ),
    "Failed carries the failure target's reason": (
        {"failed": 1, "terminating": 0},
        set(),
        ju.FAILED,
        {"succeeded": 0, "failed": 1, "complete": False, "events": [ju.REASON_BACKOFF_LIMIT]},
    ),
}


@pytest.mark.parametrize("status,tracked,finished,want", FLUSHES.values(), ids=FLUSHES.keys())
def test_flush_status(status: Obj, tracked: set[str], finished: str, want: Obj) -> None:
    reason = ju.REASON_COMPLETIONS_REACHED if finished == ju.COMPLETE else ju.REASON_BACKOFF_LIMIT
    cond = ju.new_condition(finished, "True", reason, "m", NOW - timedelta(seconds=5))
    out, events = flush_status(status, tracked, cond, NOW)
    assert (out["succeeded"], out["failed"]) == (want["succeeded"], want["failed"])
    assert ("completionTime" in out) == want["complete"]
    if want["complete"]:
        assert out["completionTime"] == STAMP
    assert [reason for _, reason, _ in events] == want["events"]
    assert (ju.finished_type({"status": out}) is not None) == bool(want["events"])


BACKOFFS = {
    "no news keeps the record": (BackoffRecord(2, NOW), [], [], BackoffRecord(2, NOW)),
    "failures add up": (BackoffRecord(1, NOW), [], ["f1", "f2"], BackoffRecord(3, NOW)),
    "a success resets": (BackoffRecord(4, NOW), ["s"], [], BackoffRecord(0, None)),
}


@pytest.mark.parametrize("record,succeeded,failed,want", BACKOFFS.values(), ids=BACKOFFS.keys())
def test_next_backoff(
    record: BackoffRecord, succeeded: list[str], failed: list[str], want: BackoffRecord
) -> None:
    pods_s = [pod(n, "Succeeded") for n in succeeded]
    pods_f = [pod(n, "Failed") for n in failed]
    assert next_backoff(record, pods_s, pods_f, NOW) == want


@pytest.mark.parametrize(
    "failures,delay", [(0, 0.0), (1, 10.0), (2, 20.0), (4, 80.0), (7, 600.0), (30, 600.0)]
)
def test_backoff_delay(failures: int, delay: float) -> None:
    assert backoff_delay(failures) == delay
    record = BackoffRecord(failures, NOW - timedelta(seconds=5))
    assert record.remaining(NOW) == max(0.0, delay - 5)


INTERVALS = {
    "empty": ("", set()),
    "single": ("5", {5}),
    "ranges": ("0-3,5,7-9", {0, 1, 2, 3, 5, 7, 8, 9}),
}


@pytest.mark.parametrize("text,indexes", INTERVALS.values(), ids=INTERVALS.keys())
def test_intervals(text: str, indexes: set[int]) -> None:
    assert ju.parse_intervals(text) == indexes
    assert ju.format_intervals(indexes) == text


def test_intervals_beyond_completions_are_dropped() -> None:
    assert ju.parse_intervals("0-3,8", 3) == {0, 1, 2}


def test_indexed_pod_from_template() -> None:
    body = ju.pod_from_template(job(completionMode="Indexed", completions=3), 2)
    md = body["metadata"]
    assert md["generateName"] == "pi-2-"
    assert md["annotations"][ju.COMPLETION_INDEX] == "2"
    assert md["labels"][ju.COMPLETION_INDEX] == "2"
    assert md["finalizers"] == [ju.JOB_TRACKING_FINALIZER]
    assert md["ownerReferences"][0] | {} == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "pi",
        "uid": JOB_UID,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert body["spec"]["hostname"] == "pi-2"
    env = body["spec"]["containers"][0]["env"]
    assert env == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {"fieldPath": f"metadata.annotations['{ju.COMPLETION_INDEX}']"}
            },
        }
    ]


def test_non_indexed_pod_from_template() -> None:
    body = ju.pod_from_template(job(), None)
    assert body["metadata"]["generateName"] == "pi-"
    assert "hostname" not in body["spec"]
    assert "env" not in body["spec"]["containers"][0]


def test_fail_job_message() -> None:
    failed = pod("a", "Failed", exit_code=42)
    plan = plan_sync(job(counted(), podFailurePolicy=FAIL_ON_42), [failed], now=NOW)
    assert plan.finished is not None
    assert plan.finished["message"] == (
        "Container ctr for pod default/a failed with exit code 42 matching FailJob rule at index 0"
    )
