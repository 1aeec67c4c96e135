"""Making a failed attempt visible: the PodScheduled=False condition (as
handleSchedulingFailure in kubernetes/kubernetes pkg/scheduler/schedule_one.go).

Written with a strategic merge patch of `pods/<name>/status` (conditions merge by type), and
only when the condition's status, reason or message changes, as kube-scheduler's updatePod.
"""

from __future__ import annotations

import logging

from draplane.api import errors, meta
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.clock import Clock, format_time

log = logging.getLogger(__name__)

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def pod_scheduled_condition(pod: Obj, *, reason: str, message: str, now: str) -> Obj | None:
    """The new PodScheduled condition, or None when the pod already carries it."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") != "PodScheduled":
            continue
        if (cond.get("status"), cond.get("reason"), cond.get("message")) == (
            "False",
            reason,
            message,
        ):
            return None
        if cond.get("status") == "False":
            now = cond.get("lastTransitionTime") or now
    return {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


async def update_pod_condition(
    client: Client, pod: Obj, *, reason: str, message: str, clock: Clock
) -> None:
    condition = pod_scheduled_condition(
        pod, reason=reason, message=message, now=format_time(clock.now())
    )
    if condition is None:
        return
    md = meta.metadata(pod)
    try:
        await client.patch(
            PODS,
            md.get("name") or "",
            {"status": {"conditions": [condition]}},
            md.get("namespace") or "",
            patch_type="strategic",
            subresource="status",
        )
    except errors.StatusError as err:
        if not errors.is_not_found(err):
            log.warning(
                "Updating PodScheduled condition of %s/%s failed: %s",
                md.get("namespace"),
                md.get("name"),
                err,
            )
