"""`sync_pod`: create each template claim of a pod and record it in the pod's status.

As syncPod of kubernetes/kubernetes pkg/controller/resourceclaim: handleClaim per pod claim (with
the recovery lookup of findPodResourceClaim, so a claim is never created twice), one status write
per pass (a strategic-merge patch of `pods/status` keyed by `name`, so entries written by others
survive), then help for pods that are already bound to a node (resourceclaim_scheduled.py).
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError, not_found
from draplane.api.kinds import PODS, RESOURCE_CLAIMS, ResourceType
from draplane.api.meta import Obj
from draplane.controllers.resourceclaim_context import (
    CLAIM_POD_OWNER_INDEX,
    FIELD_MANAGER,
    REASON_FAILED_CREATION,
    ClaimControllerContext,
    SyncError,
    claim_pod_owner_index,
    is_pod_done,
    pod_claims,
)
from draplane.controllers.resourceclaim_scheduled import help_scheduled_pod
from draplane.dra import claims as dra
from draplane.klog import V2

log = logging.getLogger(__name__)

GENERATE_NAME_LIMIT = 57


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The generateName of a pod's claim: `<pod>-<pod claim>-` (the 1.29+ form).

    Longer than 57 characters: both parts shrink in proportion and the trailing hyphen goes,
    as upstream does. Two cuts would make an invalid name that fails forever, so they are
    avoided: a pod part ending in "." (".-") drops the dot, and a pod part cut to nothing (a
    one-character pod name with a long pod claim name gives "-...") keeps the pod name's first
    character.
    """
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) <= GENERATE_NAME_LIMIT:
        return base
    total = len(base)
    pod_part = pod_name[: max(1, len(pod_name) * GENERATE_NAME_LIMIT // total)].rstrip(".")
    claim_part = pod_claim_name[: len(pod_claim_name) * GENERATE_NAME_LIMIT // total]
    return f"{pod_part}-{claim_part}"


async def sync_pod(ctx: ClaimControllerContext, namespace: str, name: str) -> None:
    pod = ctx.pods.get(name, namespace)
    # Done pods get nothing either: creating claims for them would be deleted again by
    # sync_claim, a create/delete loop (docs/fidelity.md).
    if pod is None or meta.deletion_timestamp(pod) or is_pod_done(pod):
        return
    new_pod_claims: dict[str, str] = {}
    for pod_claim in pod_claims(pod):
        pod_claim_name = str(pod_claim.get("name") or "")
        try:
            claim_name = await _handle_claim(ctx, pod, pod_claim)
        except (SyncError, StatusError) as err:
            message = f"PodResourceClaim {pod_claim_name}: {err}"
            ctx.recorder.event(pod, "Warning", REASON_FAILED_CREATION, message)
            if isinstance(err, SyncError) and err.claim is not None:
                ctx.recorder.event(err.claim, "Warning", REASON_FAILED_CREATION, message)
            raise SyncError(f"pod {namespace}/{name}, {message}") from err
        if claim_name is not None:
            new_pod_claims[pod_claim_name] = claim_name
    if new_pod_claims:
        pod = await _record_claims(ctx, pod, new_pod_claims)
    if (pod.get("spec") or {}).get("nodeName"):
        await help_scheduled_pod(ctx, pod)


async def _handle_claim(ctx: ClaimControllerContext, pod: Obj, pod_claim: Obj) -> str | None:
    """The claim name to record for this pod claim, or None when there is nothing to record."""
    namespace = meta.namespace(pod)
    try:
        claim_name, must_check_owner = dra.name(pod, pod_claim)
    except dra.ErrClaimNotFound:
        pass
    except dra.ClaimNameError as err:
        raise SyncError(f"checking for claim before creating it: {err}") from err
    else:
        if claim_name is None:
            return None
        claim = ctx.claims.get(claim_name, namespace)
        if claim is not None:
            problem = dra.is_for_pod(pod, claim) if must_check_owner else None
            if problem is None:
                return None
            # Upstream silently creates a replacement here; we leave the foreign claim and the
            # status alone and tell the user, as podNeedsWork's "must be removed" implies.
            raise SyncError(
                f"{problem}; pod.status.resourceClaimStatuses names it, so no claim is created "
                f"until that claim or the status entry is removed",
                claim=claim,
            )
    source = dra.pod_claim_source(pod_claim)
    template_name = source.get("resourceClaimTemplateName")
    if source.get("resourceClaimName") or not template_name:
        return None  # user claims are never created by the controller
    if meta.uid(pod) in ctx.uncertain_creates:
        await _learn_uncertain_creates(ctx, pod)
    claim = find_pod_resource_claim(ctx, pod, pod_claim)
    if claim is None:
        claim = await _create_claim(ctx, pod=pod, pod_claim=pod_claim, template_name=template_name)
    return meta.name(claim)


def find_pod_resource_claim(ctx: ClaimControllerContext, pod: Obj, pod_claim: Obj) -> Obj | None:
    """A claim this pod controls that was made for this pod claim (findPodResourceClaim): recorded
    by its annotation, or (claims made by <= 1.27) named exactly `<pod>-<pod claim>` without one.

    Candidates are the informer's claims plus those this controller created that the informer has
    not delivered yet (the mutation cache). Unlike 1.28 (a quirk), a claim that is being deleted is
    not adopted: its name would only hold the pod back until the claim is gone and a replacement is
    created anyway.
    """
    pod_claim_name = pod_claim.get("name")
    legacy_name = f"{meta.name(pod)}-{pod_claim_name}"
    for claim in ctx.claim_cache.by_index(CLAIM_POD_OWNER_INDEX, meta.uid(pod)):
        if meta.deletion_timestamp(claim):
            continue
        recorded = meta.annotations(claim).get(dra.ANNOTATION_POD_CLAIM_NAME)
        if recorded is None:
            if meta.name(claim) == legacy_name:
                return claim
        elif recorded == pod_claim_name:
            return claim
    return None


async def _learn_uncertain_creates(ctx: ClaimControllerContext, pod: Obj) -> None:
    """After a create whose outcome is unknown, find the pod's claims on the API server (the
    informer may not have them yet) so that the retry does not create a second claim."""
    listed = await ctx.client.list(ctx.policy.claim_type, meta.namespace(pod))
    pod_uid = meta.uid(pod)
    for claim in listed.get("items") or []:
        if pod_uid in claim_pod_owner_index(claim):
            ctx.claim_cache.mutation(claim)
    ctx.uncertain_creates.discard(pod_uid)


async def _create_claim(
    ctx: ClaimControllerContext, *, pod: Obj, pod_claim: Obj, template_name: str
) -> Obj:
    namespace = meta.namespace(pod)
    template = ctx.templates.get(template_name, namespace)
    if template is None:
        missing = not_found(ctx.policy.template_type, template_name)
        raise SyncError(f'resource claim template "{template_name}": {missing}')
    claim = build_claim(pod=pod, pod_claim=pod_claim, template=template, rt=ctx.policy.claim_type)
    ctx.metrics.create_attempts.inc()
    try:
        created = await ctx.client.create(ctx.policy.claim_type, claim, namespace)
    except Exception as err:
        ctx.metrics.create_failures.inc()
        if not isinstance(err, StatusError) or err.code >= 500:
            ctx.uncertain_creates.add(meta.uid(pod))
        raise SyncError(f"create ResourceClaim {claim['metadata']['generateName']}: {err}") from err
    ctx.claim_cache.mutation(created)
    log.log(
        V2,
        "Created ResourceClaim %s/%s for pod %s/%s",
        namespace,
        meta.name(created),
        namespace,
        meta.name(pod),
    )
    return created


def build_claim(
    *, pod: Obj, pod_claim: Obj, template: Obj, rt: ResourceType = RESOURCE_CLAIMS
) -> Obj:
    """The ResourceClaim generated from `template` for one pod claim, as handleClaim builds it."""
    template_spec = template.get("spec") or {}
    template_meta = template_spec.get("metadata") or {}
    # Copies: the template is the informer's, shared and read-only.
    annotations = dict(template_meta.get("annotations") or {})
    annotations[dra.ANNOTATION_POD_CLAIM_NAME] = str(pod_claim.get("name") or "")
    metadata: Obj = {
        "generateName": generate_name(meta.name(pod), str(pod_claim.get("name") or "")),
        "namespace": meta.namespace(pod),
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": meta.name(pod),
                "uid": meta.uid(pod),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "annotations": annotations,
    }
    if template_meta.get("labels"):
        metadata["labels"] = dict(template_meta["labels"])
    return {
        "apiVersion": rt.api_version,
        "kind": rt.kind,
        "metadata": metadata,
        "spec": meta.deep_copy(template_spec.get("spec") or {}),
    }


async def _record_claims(
    ctx: ClaimControllerContext, pod: Obj, new_pod_claims: dict[str, str]
) -> Obj:
    """Set `status.resourceClaimStatuses` entries by name, keeping every other entry."""
    patch = {
        "status": {
            "resourceClaimStatuses": [
                {"name": pod_claim_name, "resourceClaimName": claim_name}
                for pod_claim_name, claim_name in new_pod_claims.items()
            ]
        }
    }
    try:
        return await ctx.client.patch(
            PODS,
            meta.name(pod),
            patch,
            meta.namespace(pod),
            patch_type="strategic",
            subresource="status",
            field_manager=FIELD_MANAGER,
        )
    except StatusError as err:
        raise SyncError(
            f"update pod {meta.namespace(pod)}/{meta.name(pod)} ResourceClaimStatuses: {err}"
        ) from err
