"""batch/v1 Job and CronJob (Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.core import OBJECT_REFERENCE
from draplane.api.schema.meta import LABEL_SELECTOR, OBJECT_META, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, f, struct
from draplane.api.schema.pod import POD_TEMPLATE_SPEC

BATCH = "io.k8s.api.batch.v1."

ON_EXIT_CODES = struct(
    BATCH + "PodFailurePolicyOnExitCodesRequirement",
    "Matches a failed pod by the exit codes of its containers.",
    f(
        "containerName",
        "string",
        "Only this container's exit code; any container when empty.",
        tag=1,
        pointer=True,
    ),
    f("operator", "string", "In or NotIn.", required=True, enum=("In", "NotIn"), tag=2),
    f("values", Arr("int32"), "The exit codes.", required=True, list_type="set", tag=3),
)
ON_POD_CONDITIONS = struct(
    BATCH + "PodFailurePolicyOnPodConditionsPattern",
    "Matches a failed pod by one of its conditions.",
    f("type", "string", "The pod condition type.", required=True, tag=1),
    f("status", "string", "The condition's status.", required=True, tag=2),
)
POD_FAILURE_POLICY_RULE = struct(
    BATCH + "PodFailurePolicyRule",
    "An action taken on a pod failure that matches its requirements.",
    f(
        "action",
        "string",
        "FailJob, FailIndex, Ignore or Count.",
        required=True,
        enum=("Count", "FailIndex", "FailJob", "Ignore"),
        tag=1,
    ),
    f("onExitCodes", ON_EXIT_CODES, "The exit codes it matches.", tag=2),
    f(
        "onPodConditions",
        Arr(ON_POD_CONDITIONS),
        "The pod conditions it matches.",
        list_type="atomic",
        tag=3,
    ),
)
POD_FAILURE_POLICY = struct(
    BATCH + "PodFailurePolicy",
    "How pod failures count toward the backoff limit.",
    f(
        "rules",
        Arr(POD_FAILURE_POLICY_RULE),
        "Rules checked in order; the first match decides.",
        required=True,
        list_type="atomic",
        tag=1,
    ),
)
JOB_SPEC = struct(
    BATCH + "JobSpec",
    "The desired state of a Job.",
    f("parallelism", "int32", "Most pods running at once.", tag=1, pointer=True),
    f(
        "completions",
        "int32",
        "Successful pods needed for the Job to complete.",
        tag=2,
        pointer=True,
    ),
    f(
        "activeDeadlineSeconds",
        "int64",
        "Seconds the Job may be active before it is failed.",
        tag=3,
        pointer=True,
    ),
    f("podFailurePolicy", POD_FAILURE_POLICY, "How pod failures are handled.", tag=11),
    f("backoffLimit", "int32", "Retries before the Job is failed.", tag=7, pointer=True),
    f(
        "backoffLimitPerIndex",
        "int32",
        "Retries of each index of an Indexed Job.",
        tag=12,
        pointer=True,
    ),
    f(
        "maxFailedIndexes",
        "int32",
        "Failed indexes before the whole Job is failed.",
        tag=13,
        pointer=True,
    ),
    f("selector", LABEL_SELECTOR, "Label query over the Job's pods.", tag=4),
    f(
        "manualSelector",
        "boolean",
        "The selector is set by the user, not generated.",
        tag=5,
        pointer=True,
    ),
    f("template", POD_TEMPLATE_SPEC, "The pods the Job runs.", required=True, tag=6),
    f(
        "ttlSecondsAfterFinished",
        "int32",
        "Seconds after finishing before the Job is deleted.",
        tag=8,
        pointer=True,
    ),
    f(
        "completionMode",
        "string",
        "NonIndexed or Indexed.",
        enum=("Indexed", "NonIndexed"),
        tag=9,
        pointer=True,
    ),
    f("suspend", "boolean", "No pods run while true.", tag=10, pointer=True),
    f(
        "podReplacementPolicy",
        "string",
        "When a replacement pod is created: TerminatingOrFailed or Failed.",
        enum=("Failed", "TerminatingOrFailed"),
        tag=14,
        pointer=True,
    ),
)
JOB_CONDITION = struct(
    BATCH + "JobCondition",
    "The state of a Job at a point in time.",
    f("type", "string", "Complete, Failed, Suspended, FailureTarget, ...", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("lastProbeTime", "time", "When the condition was last checked.", emit=True, tag=3),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True, tag=4),
    f("reason", "string", "Machine-readable reason of the last transition.", tag=5),
    f("message", "string", "Human-readable detail of the last transition.", tag=6),
)
UNCOUNTED_TERMINATED_PODS = struct(
    BATCH + "UncountedTerminatedPods",
    "UIDs of finished pods not yet counted in the status.",
    f("succeeded", Arr("string"), "UIDs of succeeded pods.", list_type="set", tag=1),
    f("failed", Arr("string"), "UIDs of failed pods.", list_type="set", tag=2),
)
JOB_STATUS = struct(
    BATCH + "JobStatus",
    "The observed state of a Job.",
    f(
        "conditions",
        Arr(JOB_CONDITION),
        "Current observations of its state.",
        merge="type",
        list_type="atomic",
        tag=1,
    ),
    f("startTime", "time", "When the controller started the Job.", tag=2, pointer=True),
    f("completionTime", "time", "When the Job completed.", tag=3, pointer=True),
    f("active", "int32", "Pending and running pods.", tag=4),
    f("succeeded", "int32", "Pods that succeeded.", tag=5),
    f("failed", "int32", "Pods that failed.", tag=6),
    f("terminating", "int32", "Pods being terminated.", tag=11, pointer=True),
    f("completedIndexes", "string", "Completed indexes of an Indexed Job, e.g. 1,3-5.", tag=7),
    f(
        "failedIndexes",
        "string",
        "Failed indexes of an Indexed Job with backoffLimitPerIndex.",
        tag=10,
        pointer=True,
    ),
    f(
        "uncountedTerminatedPods",
        UNCOUNTED_TERMINATED_PODS,
        "Finished pods not yet counted.",
        tag=8,
    ),
    f("ready", "int32", "Ready pods.", tag=9, pointer=True),
)
JOB = struct(
    BATCH + "Job",
    "Runs pods until a number of them succeed.",
    *type_meta(),
    metadata_field(),
    f("spec", JOB_SPEC, "Desired state.", emit=True, tag=2),
    f("status", JOB_STATUS, "Observed state.", emit=True, tag=3),
)
JOB_TEMPLATE_SPEC = struct(
    BATCH + "JobTemplateSpec",
    "The Jobs a CronJob creates: their metadata and spec.",
    f("metadata", OBJECT_META, "Metadata of the Jobs.", emit=True, tag=1),
    f("spec", JOB_SPEC, "Desired state of the Jobs.", emit=True, tag=2),
)
CRON_JOB_SPEC = struct(
    BATCH + "CronJobSpec",
    "The desired state of a CronJob.",
    f("schedule", "string", "The schedule, in cron format.", required=True, tag=1),
    f(
        "timeZone",
        "string",
        "The time zone of the schedule (a tz database name).",
        tag=8,
        pointer=True,
    ),
    f(
        "startingDeadlineSeconds",
        "int64",
        "Seconds a missed run may still start late.",
        tag=2,
        pointer=True,
    ),
    f(
        "concurrencyPolicy",
        "string",
        "Allow, Forbid or Replace runs that overlap.",
        enum=("Allow", "Forbid", "Replace"),
        tag=3,
    ),
    f("suspend", "boolean", "No new runs start while true.", tag=4, pointer=True),
    f("jobTemplate", JOB_TEMPLATE_SPEC, "The Job each run creates.", required=True, tag=5),
    f(
        "successfulJobsHistoryLimit",
        "int32",
        "Finished successful Jobs kept.",
        tag=6,
        pointer=True,
    ),
    f("failedJobsHistoryLimit", "int32", "Finished failed Jobs kept.", tag=7, pointer=True),
)
CRON_JOB_STATUS = struct(
    BATCH + "CronJobStatus",
    "The observed state of a CronJob.",
    f("active", Arr(OBJECT_REFERENCE), "The Jobs running now.", list_type="atomic", tag=1),
    f("lastScheduleTime", "time", "When a Job was last scheduled.", tag=4, pointer=True),
    f(
        "lastSuccessfulTime",
        "time",
        "When a Job last completed successfully.",
        tag=5,
        pointer=True,
    ),
)
CRON_JOB = struct(
    BATCH + "CronJob",
    "Runs a Job on a schedule.",
    *type_meta(),
    metadata_field(),
    f("spec", CRON_JOB_SPEC, "Desired state.", emit=True, tag=2),
    f("status", CRON_JOB_STATUS, "Observed state.", emit=True, tag=3),
)
serve("batch", "v1", "Job", JOB)
serve("batch", "v1", "CronJob", CRON_JOB)
