"""What every sync of the driver controller shares: `SyncContext`, `SyncResult`, `SyncError`.

`SyncResult` carries the helper's special outcomes ("requeue", "periodic") as values; anything
else that goes wrong is raised, reported as a Warning event `Failed` and retried with backoff.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.dra.controller._interfaces import Driver

RECHECK_DELAY_SECONDS = 30.0
MUTATION_CACHE_TTL_SECONDS = 60.0


@dataclass(frozen=True)
class Delays:
    """The controller's fixed waits, in seconds of its (injected) clock. The defaults are the
    helper's; a test or a small cluster may shorten them."""

    recheck: float = RECHECK_DELAY_SECONDS
    """How long a "periodic" key waits before it is synced again (PodSchedulingContexts whose
    answer may change when the driver's own capacity does, which nothing watches)."""
    mutation_cache_ttl: float = MUTATION_CACHE_TTL_SECONDS
    """How long the controller's own claim writes override the informer's older copies."""


class SyncResult(enum.Enum):
    DONE = "done"
    REQUEUE = "requeue"
    """Try again with rate-limited backoff, silently (e.g. the class may still change)."""
    PERIODIC = "periodic"
    """Recheck after the recheck delay, silently."""
    RETRY_ON_UPDATE = "retry-on-update"
    """Another writer got in first: sync again as soon as its write arrives (at the latest
    after the recheck delay), silently."""


class SyncError(Exception):
    """A failed sync whose message is the Warning event text (upstream's wrapped errors).

    `concerns` names the claims the failure is about, each with the message its own `Failed`
    event gets, when the synced object is another one (a PodSchedulingContext): `kubectl
    describe resourceclaim` then explains why the claim is not allocated."""

    def __init__(self, message: str, *, concerns: tuple[tuple[Obj, str], ...] = ()) -> None:
        super().__init__(message)
        self.concerns = concerns


class ObjectReader(Protocol):
    def get(self, name: str, namespace: str = "") -> Obj | None: ...


class ClaimStore(ObjectReader, Protocol):
    def mutation(self, obj: Obj) -> None: ...


@dataclass
class SyncContext:
    client: Client
    driver_name: str
    driver: Driver
    claims: ClaimStore
    """Claims from the informer, overlaid with the controller's own newer writes."""
    classes: ObjectReader
    set_reserved_for: bool

    @property
    def finalizer(self) -> str:
        return self.driver_name + "/deletion-protection"

    def resource_class(self, class_name: str) -> Obj:
        found = self.classes.get(class_name)
        if found is None:
            raise errors.not_found(kinds.RESOURCE_CLASSES, class_name)
        return found


def describe_ref(ref: Obj, *, namespace: str = "") -> str:
    """A parametersRef as messages print it: `ConfigMap default/params` or `example.com/X a`."""
    kind = ref.get("kind", "")
    group = ref.get("apiGroup", "")
    ns = ref.get("namespace") or namespace
    what = f"{group}/{kind}" if group else kind
    return f"{what} {ns}/{ref.get('name', '')}" if ns else f"{what} {ref.get('name', '')}"


async def get_parameters(
    ctx: SyncContext, claim: Obj, resource_class: Obj
) -> tuple[object, object]:
    """(class parameters, claim parameters), with errors worded as the helper words them."""
    try:
        class_parameters = await ctx.driver.get_class_parameters(resource_class)
    except Exception as err:
        ref = describe_ref(resource_class.get("parametersRef") or {})
        raise SyncError(f"class parameters {ref}: {err}") from err
    try:
        claim_parameters = await ctx.driver.get_claim_parameters(
            claim, resource_class=resource_class, class_parameters=class_parameters
        )
    except Exception as err:
        ref = describe_ref(
            (claim.get("spec") or {}).get("parametersRef") or {}, namespace=meta.namespace(claim)
        )
        raise SyncError(f"claim parameters {ref}: {err}") from err
    return class_parameters, claim_parameters
