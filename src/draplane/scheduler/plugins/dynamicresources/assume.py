"""The structured plugin's view of claims (spec 4.10): assume cache, in-flight allocations and
the allocated devices they add up to.

`ClaimTracker` overlays the claim informer with the objects the scheduler wrote itself (an
assumed object wins until the informer delivers the same or a newer resourceVersion), and keeps
the in-flight map, claim UID -> (pod UID, claim copy with `status.allocation`), from Reserve to
PreBind or Unreserve. `allocated_state()` is every allocated claim's devices plus the in-flight
ones, so a device never looks free between Reserve and the informer event of its allocation.
Given the informer's events it keeps that state current claim by claim (each claim's effective
allocation counted once: in-flight first, then the assumed object, then the informer's), so a
scheduling cycle does not walk every claim; without them it adds up all claims per call.
The tracker is a Lister itself, so the shared claim lookups (`pod_resource_claims`) read
through it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.dra.structured import AllocatedCounts, AllocatedState
from draplane.scheduler.framework import EventSource, Lister, unwrap


def _rv(obj: Obj) -> int:
    try:
        return int(meta.resource_version(obj) or 0)
    except ValueError:
        return 0


def _allocation(obj: Obj | None) -> Mapping[str, Any] | None:
    if obj is None:
        return None
    return (obj.get("status") or {}).get("allocation") or None


@dataclass(frozen=True, slots=True)
class InFlight:
    pod_uid: str
    claim: Obj
    """The claim as Reserve built it: finalizer added, `status.allocation` set."""


class ClaimTracker:
    def __init__(self, informer: Lister, events: EventSource | None = None) -> None:
        self._informer = informer
        self._assumed: dict[str, Obj] = {}
        self._in_flight: dict[str, InFlight] = {}
        self._lock = threading.Lock()
        self._incremental = events is not None
        self._objects: dict[str, Obj] = {}
        """Claim UID -> the informer's object (fed by its events)."""
        self._counted: dict[str, Mapping[str, Any]] = {}
        """Claim UID -> the allocation `_counts` holds for it."""
        self._counts = AllocatedCounts()
        self._snapshot: AllocatedState | None = None
        if events is not None:
            events.add_handler(
                on_add=self._on_add, on_update=self._on_update, on_delete=self._on_delete
            )

    # -- informer events -----------------------------------------------------------------------

    def _on_add(self, obj: Obj) -> None:
        uid = meta.uid(obj)
        with self._lock:
            self._objects[uid] = obj
            self._recount(uid)

    def _on_update(self, old: Obj, new: Obj) -> None:
        uid = meta.uid(new)
        with self._lock:
            if meta.uid(old) != uid:
                self._objects.pop(meta.uid(old), None)
                self._recount(meta.uid(old))
            self._objects[uid] = new
            self._recount(uid)

    def _on_delete(self, obj: Any) -> None:
        obj = unwrap(obj)
        uid = meta.uid(obj)
        with self._lock:
            self._objects.pop(uid, None)
            self._recount(uid)

    def _recount(self, uid: str) -> None:
        """Bring the claim's counted allocation in line with its effective one (lock held)."""
        if not self._incremental:
            return
        flying = self._in_flight.get(uid)
        if flying is not None:
            wanted = _allocation(flying.claim)
        else:
            obj = self._objects.get(uid)
            assumed = self._assumed.get(uid)
            if obj is not None and assumed is not None and _rv(obj) < _rv(assumed):
                obj = assumed
            wanted = _allocation(obj)
        counted = self._counted.get(uid)
        if counted is wanted:
            return
        if counted is not None:
            self._counts.remove(counted)
            del self._counted[uid]
        if wanted is not None:
            self._counts.add(wanted)
            self._counted[uid] = wanted
        self._snapshot = None

    # -- assume cache --------------------------------------------------------------------------

    def _overlay(self, obj: Obj | None) -> Obj | None:
        if obj is None:
            return None
        uid = meta.uid(obj)
        with self._lock:
            assumed = self._assumed.get(uid)
            if assumed is None:
                return obj
            if _rv(obj) >= _rv(assumed):
                del self._assumed[uid]
                return obj
        return assumed

    def assume(self, claim: Obj) -> None:
        """The scheduler wrote `claim` (the API server's answer): read it until the informer
        catches up."""
        uid = meta.uid(claim)
        with self._lock:
            self._assumed[uid] = claim
            self._recount(uid)

    def restore(self, uid: str) -> None:
        with self._lock:
            self._assumed.pop(uid, None)
            self._recount(uid)

    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self._overlay(self._informer.get(name, namespace))

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        out: list[Obj] = []
        for obj in self._informer.list(namespace, label_selector):
            current = self._overlay(obj)
            if current is not None:
                out.append(current)
        return out

    # -- in-flight allocations -----------------------------------------------------------------

    def in_flight(self, claim_uid: str) -> InFlight | None:
        with self._lock:
            return self._in_flight.get(claim_uid)

    def set_in_flight(self, claim: Obj, pod_uid: str) -> bool:
        """Register the allocation; False when another pod's allocation of the claim is."""
        uid = meta.uid(claim)
        with self._lock:
            current = self._in_flight.get(uid)
            if current is not None and current.pod_uid != pod_uid:
                return False
            self._in_flight[uid] = InFlight(pod_uid, claim)
            self._recount(uid)
            return True

    def drop_in_flight(self, claim_uid: str, pod_uid: str) -> None:
        with self._lock:
            current = self._in_flight.get(claim_uid)
            if current is not None and current.pod_uid == pod_uid:
                del self._in_flight[claim_uid]
                self._recount(claim_uid)

    def in_flight_count(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def allocated_state(self) -> AllocatedState:
        """Devices of every allocated claim (assumed objects first) and of the in-flight
        allocations (admin-access results excluded by AllocatedState). Read-only: the same
        object is returned until a claim changes."""
        if self._incremental:
            with self._lock:
                if self._snapshot is None:
                    self._snapshot = self._counts.snapshot()
                return self._snapshot
        with self._lock:
            flying = dict(self._in_flight)
        state = AllocatedState()
        for claim in self.list():
            if meta.uid(claim) in flying:
                continue
            allocation = _allocation(claim)
            if allocation:
                state.add(allocation)
        for entry in flying.values():
            allocation = _allocation(entry.claim)
            if allocation:
                state.add(allocation)
        return state
