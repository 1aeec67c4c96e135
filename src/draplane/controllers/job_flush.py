"""The last step of a Job sync: once the tracking finalizers are removed, the UIDs in
`status.uncountedTerminatedPods` move into `succeeded` and `failed`, and the finish condition
(`Complete` or `Failed`) is added when nothing is left uncounted or terminating
(flushUncountedAndRemoveFinalizers and enactJobFinished upstream).
"""

from __future__ import annotations

from datetime import datetime

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import format_time
from draplane.controllers import job_util as ju


def _uncounted(status: Obj) -> tuple[set[str], set[str]]:
    entry = status.get("uncountedTerminatedPods") or {}
    return set(entry.get("succeeded") or []), set(entry.get("failed") or [])


def flush_status(
    status: Obj, still_tracked: set[str], finished: Obj | None, now: datetime
) -> tuple[Obj, list[tuple[str, str, str]]]:
    """The status once finalizers are removed: uncounted UIDs move into the counters (except
    `still_tracked`, whose pods still carry the finalizer), and the finish condition is added
    when nothing is left uncounted or terminating. Returns the status and the events."""
    out = meta.deep_copy(status)
    unc_succeeded, unc_failed = _uncounted(out)
    moved_succeeded = unc_succeeded - still_tracked
    moved_failed = unc_failed - still_tracked
    out["succeeded"] = int(out.get("succeeded") or 0) + len(moved_succeeded)
    out["failed"] = int(out.get("failed") or 0) + len(moved_failed)
    out["uncountedTerminatedPods"] = {
        "succeeded": sorted(unc_succeeded - moved_succeeded),
        "failed": sorted(unc_failed - moved_failed),
    }
    events: list[tuple[str, str, str]] = []
    left = unc_succeeded - moved_succeeded or unc_failed - moved_failed
    if finished is None or left or int(out.get("terminating") or 0) > 0:
        return out, events
    conds = [c for c in out.get("conditions") or [] if c.get("type") != finished["type"]]
    finished = replace_time(finished, now)
    out["conditions"] = [*conds, finished]
    if finished["type"] == ju.COMPLETE:
        out["completionTime"] = finished["lastTransitionTime"]
        events.append(("Normal", "Completed", "Job completed"))
    else:
        events.append(("Warning", str(finished["reason"]), str(finished["message"])))
    return out, events


def replace_time(cond: Obj, now: datetime) -> Obj:
    stamp = format_time(now)
    return {**cond, "lastProbeTime": stamp, "lastTransitionTime": stamp}
