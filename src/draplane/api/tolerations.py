"""Taint/toleration matching (v1 semantics): the scheduler's NodeUnschedulable and TaintToleration
and the DaemonSet controller's node eligibility use the same functions."""

from __future__ import annotations

from collections.abc import Iterable

from draplane.api.meta import Obj


def tolerates(toleration: Obj, taint: Obj) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    if not key:
        return False
    return (toleration.get("value") or "") == (taint.get("value") or "")


def tolerated(tolerations: Iterable[Obj], taint: Obj) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def pod_tolerations(pod: Obj) -> list[Obj]:
    value: list[Obj] = (pod.get("spec") or {}).get("tolerations") or []
    return value


def find_untolerated(
    taints: Iterable[Obj], tolerations: Iterable[Obj], effects: Iterable[str]
) -> Obj | None:
    """The first taint with one of `effects` that no toleration tolerates
    (FindMatchingUntoleratedTaint)."""
    wanted = set(effects)
    listed = list(tolerations)
    for taint in taints:
        if taint.get("effect") in wanted and not tolerated(listed, taint):
            return taint
    return None
