"""PrioritySort: higher `spec.priority` first, then earlier arrival in the queue."""

from __future__ import annotations

from draplane.scheduler.framework import Handle, PluginArgs, QueuedPodInfo
from draplane.scheduler.plugins import names


class PrioritySort:
    name = names.PRIORITY_SORT

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info.priority, b.pod_info.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def new(args: PluginArgs, handle: Handle) -> PrioritySort:
    return PrioritySort()
