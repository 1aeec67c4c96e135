"""The resource claim controller: one ResourceClaim per template pod claim, recorded in the pod.

Handlers (enqueuePod and enqueueResourceClaim of pkg/controller/resourceclaim) only decide which
`ObjectKey`s to enqueue; workers run `sync(key)`: `sync_pod` (resourceclaim_pod.py) or
`sync_claim` (resourceclaim_claim.py), each following the mode's `ClaimPolicy`
(resourceclaim_classic.py, resourceclaim_structured.py), picked once when the controller is
built. Claims the controller just created are remembered in a MutationCache until the informer
has them, so a retried pod finds its claim instead of creating a second one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from draplane.api import meta, versions
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.client.informer import Informer, InformerFactory, unwrap
from draplane.client.mutationcache import MutationCache
from draplane.client.workers import ErrorLogger
from draplane.controllers.context import ControllerContext
from draplane.controllers.metrics import ResourceClaimMetrics
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.controllers.resourceclaim_claim import sync_claim
from draplane.controllers.resourceclaim_classic import ClassicClaims
from draplane.controllers.resourceclaim_context import (
    CLAIM_POD_OWNER_INDEX,
    DELETED_POD_MEMORY,
    EVENT_COMPONENT,
    POD,
    POD_RESOURCE_CLAIM_INDEX,
    POD_TEMPLATE_INDEX,
    RESOURCE_CLAIM,
    ClaimControllerContext,
    ClaimPolicy,
    SyncError,
    claim_pod_owner_index,
    pod_claims,
    pod_resource_claim_index,
    pod_template_index,
)
from draplane.controllers.resourceclaim_needs import pod_needs_claims, pod_needs_work
from draplane.controllers.resourceclaim_pod import sync_pod
from draplane.controllers.resourceclaim_structured import StructuredClaims
from draplane.controllers.uid_cache import UIDCache
from draplane.dra import claims as dra, extended

log = logging.getLogger(__name__)

_POLICIES: dict[versions.Mode, Callable[[InformerFactory], ClaimPolicy]] = {
    versions.CLASSIC: ClassicClaims,
    versions.STRUCTURED: lambda _informers: StructuredClaims(),
}
"""Each mode's policy, built from the shared informers."""

QUEUE_NAME = "resource_claim"
WORKERS = 10
# Upstream keeps 100 entries; overflowing them under mass pod creation can create duplicate
# claims (upstream PR #140227), so keep enough for a burst of thousands of pods.
MUTATION_CACHE_ENTRIES = 20_000
MUTATION_CACHE_TTL = 3600.0


class ResourceClaimController(QueueController):
    NAME = "resource-claim-controller"
    QUEUE_NAME = QUEUE_NAME
    WORKER_NAME = "resource-claim"
    EVENT_COMPONENT = EVENT_COMPONENT
    DISPLAY_NAME = "resource claim controller"
    WORKERS = WORKERS

    def __init__(self, ctx: ControllerContext, *, mode: versions.Mode) -> None:
        """`ctx.informers` must be built on a client acting as this controller (or an admin);
        the caller starts them. `mode`: the Kubernetes version served, whose `ClaimPolicy` the
        controller follows (1.36: resource.k8s.io/v1 claims and templates, no
        PodSchedulingContexts)."""
        super().__init__(ctx)
        informers = ctx.informers
        self._pods = informers.informer(
            PODS,
            indexers={
                POD_RESOURCE_CLAIM_INDEX: pod_resource_claim_index,
                POD_TEMPLATE_INDEX: pod_template_index,
            },
        )
        self.policy = _POLICIES[mode](informers)
        self._claims = informers.informer(
            self.policy.claim_type, indexers={CLAIM_POD_OWNER_INDEX: claim_pod_owner_index}
        )
        self._templates = informers.informer(self.policy.template_type)
        self.metrics = ResourceClaimMetrics(ctx.metrics)
        self.ctx = ClaimControllerContext(
            client=self.client,
            pods=self._pods.lister,
            claims=self._claims.lister,
            templates=self._templates.lister,
            claim_cache=MutationCache(
                self._claims.lister,
                indexers={CLAIM_POD_OWNER_INDEX: claim_pod_owner_index},
                ttl=MUTATION_CACHE_TTL,
                max_entries=MUTATION_CACHE_ENTRIES,
                clock=self.clock,
            ),
            deleted_pods=UIDCache(DELETED_POD_MEMORY),
            recorder=self.recorder,
            metrics=self.metrics,
            policy=self.policy,
        )
        self._pods.add_handler(
            on_add=lambda pod: self._enqueue_pod(pod, deleted=False),
            on_update=lambda _, pod: self._enqueue_pod(pod, deleted=False),
            on_delete=lambda pod: self._enqueue_pod(unwrap(pod), deleted=True),
        )
        self._claims.add_handler(
            on_add=lambda claim: self._enqueue_claim(claim, deleted=False),
            on_update=lambda _, claim: self._enqueue_claim(claim, deleted=False),
            on_delete=lambda claim: self._enqueue_claim(unwrap(claim), deleted=True),
        )
        self._templates.add_handler(on_add=self._enqueue_template_pods)

    def informers(self) -> tuple[Informer, ...]:
        """All of them (four in classic DRA), as upstream waits for since 1.31."""
        return (self._pods, self._claims, self._templates, *self.policy.informers())

    def log_error(self) -> ErrorLogger[ObjectKey]:
        return _log_sync_error

    async def sync(self, key: ObjectKey) -> None:
        """Level-triggered: bring the pod or claim named by `key` to what the API says."""
        if key.kind == POD:
            await sync_pod(self.ctx, key.namespace, key.name)
        elif key.kind == RESOURCE_CLAIM:
            await sync_claim(self.ctx, key.namespace, key.name)
        else:
            raise SyncError(f"unsupported key kind {key.kind!r}")

    def _enqueue_pod(self, pod: Obj, *, deleted: bool) -> None:
        extended_claim = extended.claim_name(pod)  # the scheduler's, for extended resources
        if not pod_claims(pod) and extended_claim is None:
            return
        if deleted:
            self.ctx.deleted_pods.add(meta.uid(pod))
        namespace = meta.namespace(pod)
        if not pod_needs_claims(pod, deleted=deleted):
            names = [claim_name for _, claim_name in dra.pod_claim_names(pod)]
            for claim_name in [*names, extended_claim]:
                if claim_name:
                    self.queue.add(ObjectKey(RESOURCE_CLAIM, namespace, claim_name))
        if pod_needs_work(self.ctx, pod):
            self.queue.add(ObjectKey(POD, namespace, meta.name(pod)))

    def _enqueue_claim(self, claim: Obj, *, deleted: bool) -> None:
        namespace, name = meta.namespace(claim), meta.name(claim)
        if deleted:
            # The mutation cache only learns of newer versions; a deleted claim must not be
            # found again by the recovery lookup.
            self.ctx.claim_cache.forget(claim)
        else:
            self.queue.add(ObjectKey(RESOURCE_CLAIM, namespace, name))
        # A deleted claim re-evaluates its pods, which recreates a generated claim deleted by
        # accident.
        for pod in self.ctx.pods.by_index(POD_RESOURCE_CLAIM_INDEX, f"{namespace}/{name}"):
            self._enqueue_pod(pod, deleted=False)

    def _enqueue_template_pods(self, template: Obj) -> None:
        index_key = f"{meta.namespace(template)}/{meta.name(template)}"
        for pod in self.ctx.pods.by_index(POD_TEMPLATE_INDEX, index_key):
            self._enqueue_pod(pod, deleted=False)


def _log_sync_error(key: ObjectKey, err: Exception) -> None:
    level = logging.INFO if isinstance(err, SyncError) else logging.WARNING
    log.log(level, "processing %s failed, will retry: %s", key, err)
