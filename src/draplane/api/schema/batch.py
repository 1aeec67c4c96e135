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
    f("containerName", "string", "Only this container's exit code; any container when empty."),
    f("operator", "string", "In or NotIn.", required=True, enum=("In", "NotIn")),
    f("values", Arr("int32"), "The exit codes.", required=True, list_type="set"),
)
ON_POD_CONDITIONS = struct(
    BATCH + "PodFailurePolicyOnPodConditionsPattern",
    "Matches a failed pod by one of its conditions.",
    f("type", "string", "The pod condition type.", required=True),
    f("status", "string", "The condition's status.", required=True),
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
    ),
    f("onExitCodes", ON_EXIT_CODES, "The exit codes it matches."),
    f(
        "onPodConditions",
        Arr(ON_POD_CONDITIONS),
        "The pod conditions it matches.",
        list_type="atomic",
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
    ),
)
JOB_SPEC = struct(
    BATCH + "JobSpec",
    "The desired state of a Job.",
    f("parallelism", "int32", "Most pods running at once."),
    f("completions", "int32", "Successful pods needed for the Job to complete."),
    f("activeDeadlineSeconds", "int64", "Seconds the Job may be active before it is failed."),
    f("podFailurePolicy", POD_FAILURE_POLICY, "How pod failures are handled."),
    f("backoffLimit", "int32", "Retries before the Job is failed."),
    f("backoffLimitPerIndex", "int32", "Retries of each index of an Indexed Job."),
    f("maxFailedIndexes", "int32", "Failed indexes before the whole Job is failed."),
    f("selector", LABEL_SELECTOR, "Label query over the Job's pods."),
    f("manualSelector", "boolean", "The selector is set by the user, not generated."),
    f("template", POD_TEMPLATE_SPEC, "The pods the Job runs.", required=True),
    f("ttlSecondsAfterFinished", "int32", "Seconds after finishing before the Job is deleted."),
    f("completionMode", "string", "NonIndexed or Indexed.", enum=("Indexed", "NonIndexed")),
    f("suspend", "boolean", "No pods run while true."),
    f(
        "podReplacementPolicy",
        "string",
        "When a replacement pod is created: TerminatingOrFailed or Failed.",
        enum=("Failed", "TerminatingOrFailed"),
    ),
)
JOB_CONDITION = struct(
    BATCH + "JobCondition",
    "The state of a Job at a point in time.",
    f("type", "string", "Complete, Failed, Suspended, FailureTarget, ...", required=True),
    f("status", "string", "True, False or Unknown.", required=True),
    f("lastProbeTime", "time", "When the condition was last checked.", emit=True),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True),
    f("reason", "string", "Machine-readable reason of the last transition."),
    f("message", "string", "Human-readable detail of the last transition."),
)
UNCOUNTED_TERMINATED_PODS = struct(
    BATCH + "UncountedTerminatedPods",
    "UIDs of finished pods not yet counted in the status.",
    f("succeeded", Arr("string"), "UIDs of succeeded pods.", list_type="set"),
    f("failed", Arr("string"), "UIDs of failed pods.", list_type="set"),
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
    ),
    f("startTime", "time", "When the controller started the Job."),
    f("completionTime", "time", "When the Job completed."),
    f("active", "int32", "Pending and running pods."),
    f("succeeded", "int32", "Pods that succeeded."),
    f("failed", "int32", "Pods that failed."),
    f("terminating", "int32", "Pods being terminated."),
    f("completedIndexes", "string", "Completed indexes of an Indexed Job, e.g. 1,3-5."),
    f("failedIndexes", "string", "Failed indexes of an Indexed Job with backoffLimitPerIndex."),
    f("uncountedTerminatedPods", UNCOUNTED_TERMINATED_PODS, "Finished pods not yet counted."),
    f("ready", "int32", "Ready pods."),
)
JOB = struct(
    BATCH + "Job",
    "Runs pods until a number of them succeed.",
    *type_meta(),
    metadata_field(),
    f("spec", JOB_SPEC, "Desired state.", emit=True),
    f("status", JOB_STATUS, "Observed state.", emit=True),
)
JOB_TEMPLATE_SPEC = struct(
    BATCH + "JobTemplateSpec",
    "The Jobs a CronJob creates: their metadata and spec.",
    f("metadata", OBJECT_META, "Metadata of the Jobs.", emit=True),
    f("spec", JOB_SPEC, "Desired state of the Jobs.", emit=True),
)
CRON_JOB_SPEC = struct(
    BATCH + "CronJobSpec",
    "The desired state of a CronJob.",
    f("schedule", "string", "The schedule, in cron format.", required=True),
    f("timeZone", "string", "The time zone of the schedule (a tz database name)."),
    f("startingDeadlineSeconds", "int64", "Seconds a missed run may still start late."),
    f(
        "concurrencyPolicy",
        "string",
        "Allow, Forbid or Replace runs that overlap.",
        enum=("Allow", "Forbid", "Replace"),
    ),
    f("suspend", "boolean", "No new runs start while true."),
    f("jobTemplate", JOB_TEMPLATE_SPEC, "The Job each run creates.", required=True),
    f("successfulJobsHistoryLimit", "int32", "Finished successful Jobs kept."),
    f("failedJobsHistoryLimit", "int32", "Finished failed Jobs kept."),
)
CRON_JOB_STATUS = struct(
    BATCH + "CronJobStatus",
    "The observed state of a CronJob.",
    f("active", Arr(OBJECT_REFERENCE), "The Jobs running now.", list_type="atomic"),
    f("lastScheduleTime", "time", "When a Job was last scheduled."),
    f("lastSuccessfulTime", "time", "When a Job last completed successfully."),
)
CRON_JOB = struct(
    BATCH + "CronJob",
    "Runs a Job on a schedule.",
    *type_meta(),
    metadata_field(),
    f("spec", CRON_JOB_SPEC, "Desired state.", emit=True),
    f("status", CRON_JOB_STATUS, "Observed state.", emit=True),
)
serve("batch", "v1", "Job", JOB)
serve("batch", "v1", "CronJob", CRON_JOB)
