"""Which events move which pods: the hint map and `isPodWorthRequeuing` (kubernetes/kubernetes
pkg/scheduler/internal/queue/scheduling_queue.go).

A pod's rejecting plugins (`unschedulable_plugins`) are the only ones consulted: for each
registered event that covers the incoming one, their hint functions vote; Immediately wins at
once, otherwise the strongest vote counts, and no vote means the pod stays where it is.
"""

from __future__ import annotations

import logging
from typing import Any

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.scheduler.framework.types import (
    ClusterEvent,
    PodSelector,
    QueuedPodInfo,
    QueueingHint,
    QueueingHintFn,
)

log = logging.getLogger(__name__)

HintMap = dict[ClusterEvent, list[tuple[str, QueueingHintFn | None]]]
"""Registered event -> [(plugin name, hint function or None)], built from EventsToRegister."""

HintEntries = list[tuple[str, QueueingHintFn | None]]
"""The (plugin, hint) pairs of every registered event that covers one incoming event."""

HintSelectors = dict[str, list[PodSelector]]
"""Event resource -> the PodSelectors of its hints; a resource is present only when every
hint registered for it has one (the queue then asks only the pods they select)."""


def matching_entries(hint_map: HintMap, event: ClusterEvent) -> HintEntries:
    """The (plugin, hint) pairs of every registered event covering `event`, in map order."""
    return [
        entry
        for registered, entries in hint_map.items()
        if event.matches(registered)
        for entry in entries
    ]


def queueing_hint(
    *,
    hint_map: HintMap,
    qpi: QueuedPodInfo,
    event: ClusterEvent,
    objs: tuple[Any, Any],
    hints_enabled: bool = True,
    entries: HintEntries | None = None,
) -> QueueingHint:
    """The queueing decision for one pod and one event; `objs` is (old, new). `entries`
    (from `matching_entries`) saves matching the event against the map again."""
    if not qpi.unschedulable_plugins or event.is_wildcard or not hint_map:
        return QueueingHint.QUEUE_AFTER_BACKOFF
    if entries is None:
        entries = matching_entries(hint_map, event)
    result = QueueingHint.QUEUE_SKIP
    for plugin, hint_fn in entries:
        if plugin not in qpi.unschedulable_plugins:
            continue
        hint = _call(hint_fn, qpi.pod, objs) if hints_enabled else None
        if hint is None:
            hint = QueueingHint.QUEUE_AFTER_BACKOFF
        if hint is QueueingHint.QUEUE_IMMEDIATELY:
            return hint
        result = max(result, hint)
    return result


def _call(hint_fn: QueueingHintFn | None, pod: Obj, objs: tuple[Any, Any]) -> QueueingHint | None:
    if hint_fn is None:
        return None
    try:
        return hint_fn(pod, objs[0], objs[1])
    except Exception:
        log.exception("Queueing hint failed; requeueing after backoff")
        return QueueingHint.QUEUE_AFTER_BACKOFF


_IGNORED_METADATA = ("resourceVersion", "generation", "managedFields", "finalizers")


def _relevant(pod: Obj) -> Obj:
    md = dict(meta.metadata(pod))
    for field in _IGNORED_METADATA:
        md.pop(field, None)
    claim_statuses = meta.pod_status(pod).get("resourceClaimStatuses")
    return {**pod, "metadata": md, "status": claim_statuses}


def is_pod_updated(old: Obj, new: Obj) -> bool:
    """Whether an update may make the pod schedulable: anything but bookkeeping metadata and
    status changed, except that `status.resourceClaimStatuses` counts (a generated claim's name
    being recorded must requeue the pod)."""
    return _relevant(old) != _relevant(new)
