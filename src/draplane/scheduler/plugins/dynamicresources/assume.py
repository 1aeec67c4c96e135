"""The structured plugin's view of claims (spec 4.10): assume cache, in-flight allocations and
the allocated devices they add up to.

`ClaimTracker` overlays the claim informer with the objects the scheduler wrote itself (an
assumed object wins until the informer delivers the same or a newer resourceVersion), and keeps
the in-flight map, claim UID -> (pod UID, claim copy with `status.allocation`), from Reserve to
PreBind or Unreserve. `allocated_state()` is every allocated claim's devices plus the in-flight
ones, so a device never looks free between Reserve and the informer event of its allocation.
The tracker is a Lister itself, so the shared claim lookups (`pod_resource_claims`) read
through it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from draplane.api.meta import Obj
from draplane.dra.structured import AllocatedState
from draplane.scheduler.framework import Lister


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _rv(obj: Obj) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


@dataclass(frozen=True, slots=True)
class InFlight:
    pod_uid: str
    claim: Obj
    """The claim as Reserve built it: finalizer added, `status.allocation` set."""


class ClaimTracker:
    def __init__(self, informer: Lister) -> None:
        self._informer = informer
        self._assumed: dict[str, Obj] = {}
        self._in_flight: dict[str, InFlight] = {}
        self._lock = threading.Lock()

    # -- assume cache --------------------------------------------------------------------------

    def _overlay(self, obj: Obj | None) -> Obj | None:
        if obj is None:
            return None
        uid = _uid(obj)
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
        with self._lock:
            self._assumed[_uid(claim)] = claim

    def restore(self, uid: str) -> None:
        with self._lock:
            self._assumed.pop(uid, None)

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
        uid = _uid(claim)
        with self._lock:
            current = self._in_flight.get(uid)
            if current is not None and current.pod_uid != pod_uid:
                return False
            self._in_flight[uid] = InFlight(pod_uid, claim)
            return True

    def drop_in_flight(self, claim_uid: str, pod_uid: str) -> None:
        with self._lock:
            current = self._in_flight.get(claim_uid)
            if current is not None and current.pod_uid == pod_uid:
                del self._in_flight[claim_uid]

    def in_flight_count(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def allocated_state(self) -> AllocatedState:
        """Devices of every allocated claim (assumed objects first) and of the in-flight
        allocations (admin-access results excluded by AllocatedState)."""
        with self._lock:
            flying = dict(self._in_flight)
        state = AllocatedState()
        for claim in self.list():
            if _uid(claim) in flying:
                continue
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation:
                state.add(allocation)
        for entry in flying.values():
            allocation = (entry.claim.get("status") or {}).get("allocation")
            if allocation:
                state.add(allocation)
        return state
