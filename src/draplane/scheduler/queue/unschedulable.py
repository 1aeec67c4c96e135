"""The unschedulable pool, indexed by what its pods wait for (the scheduling queue's
`unschedulablePods`).

A cluster event asks the queueing hints of every pod in the pool. When the hints registered
for the event's resource declare `PodSelector`s, the pool indexes each pod under its selector
keys (e.g. the names of its ResourceClaims) and hands out only the pods under the event's key:
the others would all get QueueSkip. That turns a claim event from O(pool) hint calls into a
dict lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from draplane.scheduler.framework.types import ClusterEvent, PodSelector, QueuedPodInfo


class UnschedulablePods:
    """Pod key -> QueuedPodInfo, plus one key index per selector."""

    def __init__(self, selectors: Mapping[str, Sequence[PodSelector]] | None = None) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._selectors = {r: list(s) for r, s in (selectors or {}).items() if s}
        self._index: dict[int, dict[str, set[str]]] = {
            id(s): {} for selectors_ in self._selectors.values() for s in selectors_
        }
        self._keys_of: dict[str, list[tuple[int, list[str]]]] = {}
        """Pod key -> (selector id, its keys for this pod), to unindex."""
        self._unkeyed: set[str] = set()
        """Pods asked about every event: without rejecting plugins, every event requeues them."""
        self._seq: dict[str, int] = {}
        self._next_seq = 0

    def __contains__(self, pod_key: object) -> bool:
        return pod_key in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[str]:
        return iter(self._pods)

    def get(self, pod_key: str) -> QueuedPodInfo | None:
        return self._pods.get(pod_key)

    def values(self) -> list[QueuedPodInfo]:
        """A snapshot: callers move pods out while iterating."""
        return list(self._pods.values())

    def put(self, qpi: QueuedPodInfo) -> None:
        """Add or replace the pod and (re)index it from its current object."""
        key = qpi.key
        if key in self._pods:
            self._unindex(key)
        else:
            self._next_seq += 1
            self._seq[key] = self._next_seq
        self._pods[key] = qpi
        if not self._selectors:
            return
        if not qpi.unschedulable_plugins:
            self._unkeyed.add(key)
        entries: list[tuple[int, list[str]]] = []
        for selectors in self._selectors.values():
            for selector in selectors:
                keys = list(dict.fromkeys(selector.pod_keys(qpi.pod)))
                index = self._index[id(selector)]
                for k in keys:
                    index.setdefault(k, set()).add(key)
                entries.append((id(selector), keys))
        self._keys_of[key] = entries

    def pop(self, pod_key: str) -> QueuedPodInfo | None:
        qpi = self._pods.pop(pod_key, None)
        if qpi is not None:
            self._seq.pop(pod_key, None)
            self._unindex(pod_key)
        return qpi

    def candidates(self, event: ClusterEvent, old: Any, new: Any) -> list[QueuedPodInfo]:
        """The pods whose hints may requeue them for `event`: all, unless selectors narrow it."""
        selectors = self._selectors.get(event.resource)
        if selectors is None or event.is_wildcard:
            return self.values()
        keys: set[str] = set(self._unkeyed)
        for selector in selectors:
            event_key = selector.event_key(old, new)
            if event_key is None:
                return self.values()
            keys.update(self._index[id(selector)].get(event_key, ()))
        # In pool order, as a full scan would visit them.
        found = [self._pods[k] for k in keys if k in self._pods]
        found.sort(key=lambda qpi: self._seq[qpi.key])
        return found

    def concerns(self, qpi: QueuedPodInfo) -> Callable[[ClusterEvent, Any, Any], bool]:
        """For one pod, in the pool or not: whether its hints must be asked about an event
        (the replay of in-flight events uses it; the pod's keys are computed once)."""
        if not qpi.unschedulable_plugins:
            return lambda event, old, new: True
        keys: dict[int, set[str]] = {}

        def check(event: ClusterEvent, old: Any, new: Any) -> bool:
            selectors = self._selectors.get(event.resource)
            if selectors is None or event.is_wildcard:
                return True
            for selector in selectors:
                event_key = selector.event_key(old, new)
                if event_key is None:
                    return True
                pod_keys = keys.get(id(selector))
                if pod_keys is None:
                    pod_keys = keys[id(selector)] = set(selector.pod_keys(qpi.pod))
                if event_key in pod_keys:
                    return True
            return False

        return check

    def _unindex(self, pod_key: str) -> None:
        self._unkeyed.discard(pod_key)
        for selector_id, keys in self._keys_of.pop(pod_key, ()):
            index = self._index[selector_id]
            for k in keys:
                pods = index.get(k)
                if pods is None:
                    continue
                pods.discard(pod_key)
                if not pods:
                    del index[k]
