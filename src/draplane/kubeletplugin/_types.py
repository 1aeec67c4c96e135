"""What a DRA driver gives the kubelet-plugin helper and gets from it (upstream's
`kubeletplugin.DRAPlugin` interface, `PrepareResult`, `Device`, `NamespacedObject`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from draplane.api.meta import Obj


@dataclass(frozen=True)
class Device:
    """One device prepared for a claim, as NodePrepareResources returns it."""

    pool_name: str
    device_name: str
    requests: tuple[str, ...] = ()
    """The claim's requests the device serves; empty: all of them."""
    cdi_device_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class PrepareResult:
    """The outcome for one claim: its devices, or `error` (non-empty: it failed)."""

    devices: tuple[Device, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class NamespacedObject:
    """A claim the kubelet unprepares: it may be gone from the API already."""

    namespace: str
    name: str
    uid: str


class DRAPlugin(Protocol):
    """The driver's part; the helper runs the gRPC services around it.

    Calls come one at a time (the helper serializes them). Both must be idempotent: the
    kubelet calls again after a failure or a restart."""

    async def prepare_resource_claims(self, claims: list[Obj]) -> dict[str, PrepareResult]:
        """Prepare the claims (read from the API by the helper, allocated and with the UID the
        kubelet named); the result by claim UID. A claim left out of the result fails."""
        ...

    async def unprepare_resource_claims(self, claims: list[NamespacedObject]) -> dict[str, str]:
        """Undo `prepare_resource_claims`; by claim UID, an error message or "" for done."""
        ...
