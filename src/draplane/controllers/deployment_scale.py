"""Replica arithmetic of the Deployment controller, as pure functions over ReplicaSets:
how far to scale the new ReplicaSet up (NewRSNewReplicas), how far to scale old ones down
during a rolling update (reconcileOldReplicaSets), and proportional scaling (scale) for
scaling events and paused Deployments. Each returns target `spec.replicas` by ReplicaSet name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers.deployment_util import (
    by_creation,
    creation_key,
    desired_replicas_annotation,
    is_rolling_update,
    max_replicas_annotation,
    max_surge,
    max_unavailable,
    replicas,
    status,
)


def available(rs: Obj) -> int:
    return int(status(rs).get("availableReplicas") or 0)


def total_replicas(rss: Sequence[Obj | None]) -> int:
    return sum(replicas(rs) for rs in rss if rs is not None)


def active(rss: Sequence[Obj | None]) -> list[Obj]:
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def new_rs_new_replicas(d: Obj, all_rss: Sequence[Obj], new_rs: Obj) -> int:
    """The new ReplicaSet's next size: up to desired + maxSurge pods in total (Recreate:
    desired at once)."""
    desired = replicas(d)
    if not is_rolling_update(d):
        return desired
    max_total = desired + max_surge(d)
    current = total_replicas(all_rss)
    if current >= max_total:
        return replicas(new_rs)
    return replicas(new_rs) + min(max_total - current, desired - replicas(new_rs))


def old_scale_down(
    d: Obj, all_rss: Sequence[Obj], old_rss: Sequence[Obj], new_rs: Obj | None
) -> dict[str, int]:
    """Old ReplicaSets' new sizes for one rolling-update step: first their unavailable
    replicas, oldest first, then any availability above desired - maxUnavailable."""
    if total_replicas(old_rss) == 0:
        return {}
    desired = replicas(d)
    min_available = desired - max_unavailable(d)
    new_unavailable = (replicas(new_rs) - available(new_rs)) if new_rs is not None else 0
    budget = total_replicas(all_rss) - min_available - new_unavailable
    if budget <= 0:
        return {}
    sizes = {meta.name(rs): replicas(rs) for rs in old_rss}
    ordered = by_creation(old_rss)
    scaled = 0
    for rs in ordered:
        if scaled >= budget:
            break
        size = sizes[meta.name(rs)]
        if size == 0 or size == available(rs):
            continue
        step = min(budget - scaled, size - available(rs))
        sizes[meta.name(rs)] = size - step
        scaled += step
    available_total = sum(available(rs) for rs in all_rss)
    if available_total > min_available:
        excess = available_total - min_available
        removed = 0
        for rs in ordered:
            if removed >= excess:
                break
            size = sizes[meta.name(rs)]
            if size == 0:
                continue
            step = min(size, excess - removed)
            sizes[meta.name(rs)] = size - step
            removed += step
    return {name: size for name, size in sizes.items() if size != replicas(_find(old_rss, name))}


def _find(rss: Sequence[Obj], name: str) -> Obj:
    return next(rs for rs in rss if meta.name(rs) == name)


def is_scaling_event(d: Obj, rss: Sequence[Obj | None]) -> bool:
    return any(
        (want := desired_replicas_annotation(rs)) is not None and want != replicas(d)
        for rs in active(rss)
    )


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    return (
        rs is not None
        and replicas(rs) == replicas(d)
        and desired_replicas_annotation(rs) == replicas(d)
        and available(rs) == replicas(d)
    )


def _round(value: float) -> int:
    """math.Round: halves away from zero."""
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def _fraction(rs: Obj, d: Obj) -> int:
    if replicas(d) == 0:
        return -replicas(rs)
    target = replicas(d) + max_surge(d)
    annotated = max_replicas_annotation(rs)
    if not annotated:
        annotated = int(status(d).get("replicas") or 0)
        if annotated == 0:
            return 0
    return _round(replicas(rs) * target / annotated) - replicas(rs)


def _newest_first(rs: Obj) -> tuple[int, float, str]:
    created, name = creation_key(rs)
    return (-replicas(rs), -created, name)


def _oldest_first(rs: Obj) -> tuple[int, float, str]:
    created, name = creation_key(rs)
    return (-replicas(rs), created, name)


def proportional_scale(d: Obj, new_rs: Obj | None, old_rss: Sequence[Obj]) -> dict[str, int]:
    """New sizes when the Deployment was scaled (or is paused): each active ReplicaSet gets its
    share of the change, the leftover goes to the largest. Every active ReplicaSet is listed
    when shares were computed, so that its replica annotations are rewritten too."""
    all_rss: list[Obj] = [*([new_rs] if new_rs is not None else []), *old_rss]
    live = active(all_rss)
    desired = replicas(d)
    if len(live) <= 1:
        if live:
            target = live[0]
        elif new_rs is not None:
            target = new_rs
        elif old_rss:
            target = max(old_rss, key=creation_key)
        else:
            return {}
        return {} if replicas(target) == desired else {meta.name(target): desired}
    if is_saturated(d, new_rs):
        return {meta.name(rs): 0 for rs in active(old_rss)}
    if not is_rolling_update(d):
        return {}
    allowed = desired + max_surge(d) if desired > 0 else 0
    to_add = allowed - total_replicas(live)
    if to_add > 0:
        live.sort(key=_newest_first)
    elif to_add < 0:
        live.sort(key=_oldest_first)
    sizes: dict[str, int] = {}
    added = 0
    for rs in live:
        share = 0
        if to_add != 0 and replicas(rs) != 0 and to_add != added:
            fraction = _fraction(rs, d)
            allowed_share = to_add - added
            share = min(fraction, allowed_share) if to_add > 0 else max(fraction, allowed_share)
        sizes[meta.name(rs)] = replicas(rs) + share
        added += share
    if to_add != 0 and live:
        first = meta.name(live[0])
        sizes[first] = max(0, sizes[first] + to_add - added)
    return sizes
