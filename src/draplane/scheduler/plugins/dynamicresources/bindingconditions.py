"""PreBind's wait for device binding conditions (DRADeviceBindingConditions with
DRAResourceClaimDeviceStatus, beta and on in 1.36): after the claims are written, a pod whose
allocated devices carry `bindingConditions` is bound only once every such device's entry in the
claim's `status.devices` has all of them True. `wait_until_bound` emits the Normal event
`BindingConditionsPending` and checks at once, then every 5 s on the handle's clock, reading the
claims from the assume cache; a True `bindingFailureConditions` entry fails with "claim X
binding failed: ...", and `status.allocation.allocationTimestamp + bindingTimeout` passing with
"claim X binding timeout". A failure is a PreBind error: Unreserve, and the pod goes back to
the queue. In its next attempt `binding_failed` makes PreFilter treat the claim as available on
no node, and PostFilter deallocates it so that other devices can be tried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import cast

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.types import (
    AllocatedDeviceStatus,
    Condition,
    DeviceRequestAllocationResult,
    Pod,
    ResourceClaim,
)
from draplane.clock import Clock, parse_time
from draplane.scheduler.framework.handle import EventRecorder

POLL_SECONDS = 5.0
"""wait.PollUntilContextTimeout's interval in upstream's PreBind."""
PENDING_REASON = "BindingConditionsPending"


class BindingError(Exception):
    """A claim's binding failed or timed out (the PreBind error's text)."""


def _results(claim: ResourceClaim) -> list[DeviceRequestAllocationResult]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def has_binding_conditions(claim: ResourceClaim) -> bool:
    """Any allocated device of `claim` has binding conditions."""
    return any(r.get("bindingConditions") for r in _results(claim))


def _device_status(
    claim: ResourceClaim, result: DeviceRequestAllocationResult
) -> AllocatedDeviceStatus | None:
    """getAllocatedDeviceStatus: the claim's `status.devices` entry of the allocated device."""
    key = (result.get("driver"), result.get("pool"), result.get("device"), result.get("shareID"))
    for entry in (claim.get("status") or {}).get("devices") or ():
        if (entry.get("driver"), entry.get("pool"), entry.get("device"), entry.get("shareID")) == (
            key
        ):
            return entry.copy()
    return None


def _condition(entry: AllocatedDeviceStatus, type_: str) -> Condition | None:
    for condition in entry.get("conditions") or ():
        if condition.get("type") == type_:
            return condition.copy()
    return None


def claim_ready(claim: ResourceClaim, *, clock: Clock, timeout: float) -> bool:
    """isClaimReadyForBinding: True when every device with binding conditions has them all
    True; `BindingError` for a True failure condition or a passed `timeout` (seconds after the
    allocation's timestamp)."""
    name = meta.metadata(claim).get("name", "")
    if not (claim.get("status") or {}).get("allocation"):
        return False
    ready = True
    for result in _results(claim):
        if not result.get("bindingConditions"):
            continue
        entry = _device_status(claim, result)
        if entry is not None:
            for type_ in result.get("bindingFailureConditions") or ():
                failed = _condition(entry, type_)
                if failed is not None and failed.get("status") == "True":
                    raise BindingError(
                        f"claim {name} binding failed: reason={failed.get('reason', '')}, "
                        f'message="{failed.get("message", "")}"'
                    )
        if entry is None or not all(
            (_condition(entry, t) or {}).get("status") == "True"
            for t in result.get("bindingConditions") or ()
        ):
            ready = False
    if not ready and _timed_out(claim, clock=clock, timeout=timeout):
        raise BindingError(f"claim {name} binding timeout")
    return ready


def binding_failed(claim: ResourceClaim, *, clock: Clock, timeout: float) -> bool:
    """The claim's devices failed their binding conditions (a True failure condition) or did
    not meet them within `timeout` of the allocation: what PreBind's wait gave up on."""
    try:
        claim_ready(claim, clock=clock, timeout=timeout)
    except BindingError:
        return True
    return False


def _timed_out(claim: ResourceClaim, *, clock: Clock, timeout: float) -> bool:
    stamp = ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")
    if not stamp:
        return False
    return clock.now() > parse_time(str(stamp)) + timedelta(seconds=timeout)


async def wait_until_bound(
    pod: Pod | Obj,
    node_name: str,
    claims: Sequence[tuple[str, str]],
    *,
    get: Callable[[str, str], ResourceClaim | None],
    clock: Clock,
    timeout: float,
    events: EventRecorder,
) -> None:
    """Wait for the binding conditions of the pod's `claims` ((namespace, name), read through
    `get`, the assume cache); raises `BindingError`. Returns at once when no allocated device
    has binding conditions."""
    current = [get(name, namespace) for namespace, name in claims]
    if not any(c is not None and has_binding_conditions(c) for c in current):
        return
    events.event(
        cast(Obj, pod),
        "Normal",
        PENDING_REASON,
        f"waiting for binding conditions for device on node {node_name}",
    )
    deadline = clock.now() + timedelta(seconds=timeout)
    while True:
        waiting = ""
        for namespace, name in claims:
            claim = get(name, namespace)
            if claim is None:
                raise BindingError(f"claim {namespace}/{name} got deleted in the meantime")
            if not claim_ready(claim, clock=clock, timeout=timeout):
                waiting = name
                break
        if not waiting:
            return
        if clock.now() >= deadline:
            # The poll's own deadline (a claim allocated without allocationTimestamp).
            raise BindingError(f"claim {waiting} binding timeout")
        await clock.sleep(POLL_SECONDS)
