"""What the resource claim controller's sync functions work with, plus shared predicates.

`ClaimControllerContext` bundles the listers, the claim mutation cache (claims this controller
created, before the informer has them; deleted claims are forgotten), the API client, the event
recorder, the deleted-pod memory, the metrics and the mode's `ClaimPolicy`, so sync functions
take one argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from draplane.api import meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.events import EventRecorder
from draplane.client.informer import Informer
from draplane.client.interface import Client
from draplane.client.lister import Lister
from draplane.client.mutationcache import MutationCache
from draplane.controllers.metrics import ResourceClaimMetrics
from draplane.controllers.uid_cache import UIDCache
from draplane.dra import claims as dra

POD_RESOURCE_CLAIM_INDEX = "pod-resource-claim-index"
CLAIM_POD_OWNER_INDEX = "claim-pod-owner-index"
# Not upstream: lets a template created after its pods trigger their claim creation at once
# instead of after the failed sync's backoff.
POD_TEMPLATE_INDEX = "pod-resource-claim-template-index"

FIELD_MANAGER = "ResourceClaimController"
EVENT_COMPONENT = "resource_claim"
REASON_FAILED_CREATION = "FailedResourceClaimCreation"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
DELETED_POD_MEMORY = 500
POD = "Pod"
RESOURCE_CLAIM = "ResourceClaim"


class SyncError(Exception):
    """A failed sync; the key is retried with backoff. The message says what and why.

    `claim` is the existing claim the failure is about (one not owned by the pod), which
    gets the pod's Warning event too."""

    def __init__(self, message: str, *, claim: Obj | None = None) -> None:
        super().__init__(message)
        self.claim = claim


class ClaimPolicy(Protocol):
    """What the controller does its mode's way: classic DRA (1.28, `ClassicClaims`) or DRA
    with structured parameters (1.36, `StructuredClaims`), picked once from the mode."""

    @property
    def claim_type(self) -> ResourceType:
        """resource.k8s.io/v1alpha2 ResourceClaims (1.28), or v1 (1.36)."""
        ...

    @property
    def template_type(self) -> ResourceType: ...

    def informers(self) -> tuple[Informer, ...]:
        """The mode's own informers, which the controller also waits for."""
        ...

    def scheduled_pod_needs_help(self, pod: Obj, claim: Obj) -> bool:
        """Whether a pod bound to a node needs the controller for this claim of its."""
        ...

    async def help_scheduled_pod(self, ctx: ClaimControllerContext, pod: Obj, claim: Obj) -> bool:
        """Help a bound pod with one of its claims; False stops at this claim."""
        ...

    async def sync_reservations(
        self, ctx: ClaimControllerContext, claim: Obj, valid: list[Obj]
    ) -> Obj:
        """Keep only the `valid` reservations (and release what nobody uses); the claim as it is
        now."""
        ...


@dataclass(frozen=True)
class ClaimControllerContext:
    client: Client
    pods: Lister
    claims: Lister
    templates: Lister
    claim_cache: MutationCache
    deleted_pods: UIDCache
    recorder: EventRecorder
    metrics: ResourceClaimMetrics
    policy: ClaimPolicy
    # UIDs of pods whose last claim create failed without a clear answer (a 5xx, a timeout):
    # the claim may exist anyway, so the next attempt asks the API server, not the informer.
    uncertain_creates: set[str] = field(default_factory=set)


class PodOwner(NamedTuple):
    name: str
    uid: str


def pod_claims(pod: Obj) -> list[Obj]:
    value: list[Obj] = (pod.get("spec") or {}).get("resourceClaims") or []
    return value


def is_pod_done(pod: Obj) -> bool:
    """Finished, or deleted before it was scheduled: its claims are no longer needed."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return True
    return bool(meta.deletion_timestamp(pod)) and not (pod.get("spec") or {}).get("nodeName")


def owning_pod(claim: Obj) -> PodOwner | None:
    """The pod that is the claim's controller owner (a generated claim), if any."""
    for ref in meta.owner_references(claim):
        if ref.get("controller") and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return PodOwner(str(ref.get("name") or ""), str(ref.get("uid") or ""))
    return None


def pod_resource_claim_index(pod: Obj) -> list[str]:
    """`<namespace>/<claim name>` for every pod claim that resolves to a claim name."""
    namespace = meta.namespace(pod)
    return [f"{namespace}/{name}" for _, name in dra.pod_claim_names(pod) if name]


def pod_template_index(pod: Obj) -> list[str]:
    """`<namespace>/<template name>` for every pod claim generated from a template."""
    namespace = meta.namespace(pod)
    out: list[str] = []
    for pod_claim in pod_claims(pod):
        template = dra.pod_claim_source(pod_claim).get("resourceClaimTemplateName")
        if template:
            out.append(f"{namespace}/{template}")
    return out


def claim_pod_owner_index(claim: Obj) -> list[str]:
    """The UID of the pod that controls the claim."""
    return [
        str(ref.get("uid"))
        for ref in meta.owner_references(claim)
        if ref.get("controller") and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod"
    ]
