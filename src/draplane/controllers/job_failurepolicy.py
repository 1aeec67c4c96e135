"""A Job's `podFailurePolicy`: which rule a failed pod matches, and what it does
(matchPodFailurePolicy of pkg/controller/job/pod_failure_policy.go).

Rules are tried in order. `onExitCodes` matches a terminated container (init containers first)
with a non-zero exit code `In` or `NotIn` the values, optionally only the named container;
`onPodConditions` matches a pod condition of that type and status. `FailJob` fails the Job with
a message naming the match; `Ignore` does not count the failure; `FailIndex` fails the pod's
index (with backoffLimitPerIndex); `Count` counts it as usual.
"""

from __future__ import annotations

from draplane.api import meta
from draplane.api.meta import Obj

FAIL_JOB = "FailJob"
IGNORE = "Ignore"
COUNT = "Count"
FAIL_INDEX = "FailIndex"


def _exit_code_match(status: Obj, requirement: Obj) -> Obj | None:
    name = requirement.get("containerName")
    values = set(requirement.get("values") or [])
    operator = requirement.get("operator")
    for key in ("initContainerStatuses", "containerStatuses"):
        entries: list[Obj] = status.get(key) or []
        for cs in entries:
            terminated = (cs.get("state") or {}).get("terminated")
            if terminated is None or (name and cs.get("name") != name):
                continue
            code = int(terminated.get("exitCode") or 0)
            if code == 0:
                continue
            if (operator == "In" and code in values) or (
                operator == "NotIn" and code not in values
            ):
                return cs
    return None


def _condition_match(status: Obj, patterns: list[Obj]) -> Obj | None:
    conds: list[Obj] = status.get("conditions") or []
    for cond in conds:
        for pattern in patterns:
            if (cond.get("type"), cond.get("status")) == (
                pattern.get("type"),
                pattern.get("status"),
            ):
                return cond
    return None


def match(policy: Obj | None, pod: Obj) -> tuple[str, str]:
    """(action, FailJob message) for a failed pod; (`Count`, "") when no rule matches."""
    if not policy:
        return COUNT, ""
    status = pod.get("status") or {}
    where = f"{meta.namespace(pod)}/{meta.name(pod)}"
    for index, rule in enumerate(policy.get("rules") or []):
        action = str(rule.get("action") or "")
        if rule.get("onExitCodes") is not None:
            cs = _exit_code_match(status, rule["onExitCodes"])
            if cs is None:
                continue
            code = cs["state"]["terminated"].get("exitCode")
            message = (
                f"Container {cs.get('name')} for pod {where} failed with exit code {code} "
                f"matching {action} rule at index {index}"
            )
        elif rule.get("onPodConditions") is not None:
            cond = _condition_match(status, rule["onPodConditions"])
            if cond is None:
                continue
            message = (
                f"Pod {where} has condition {cond.get('type')} matching {action} rule at "
                f"index {index}"
            )
        else:
            continue
        if action == FAIL_JOB:
            return FAIL_JOB, message
        return (action if action in (IGNORE, FAIL_INDEX) else COUNT), ""
    return COUNT, ""
