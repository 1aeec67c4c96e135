"""syncPodSchedulingContext of the driver controller helper
(k8s.io/dynamic-resource-allocation/controller, v0.28).

Answers `spec.potentialNodes` with `status.resourceClaims[].unsuitableNodes` for every pending
claim of the pod this driver owns (computed jointly by the driver) and allocates them all for
`spec.selectedNode` when no claim finds it unsuitable. Two [1.29+] fixes are taken: allocated
claims are left out, and a selected node whose allocation failed is reported unsuitable.
"""

from __future__ import annotations

from draplane import dra
from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import semantic_equal
from draplane.dra.controller._claims import allocate_claims
from draplane.dra.controller._context import SyncContext, SyncError, SyncResult, get_parameters
from draplane.dra.controller._interfaces import ClaimAllocation

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


async def sync_pod_scheduling_context(ctx: SyncContext, psc: Obj) -> SyncResult:
    if meta.deletion_timestamp(psc):
        return SyncResult.DONE
    spec = psc.get("spec") or {}
    selected_node = str(spec.get("selectedNode") or "")
    potential_nodes = [str(n) for n in spec.get("potentialNodes") or []]
    if not selected_node and not potential_nodes:
        return SyncResult.DONE
    pod = await _owning_pod(ctx, psc)
    if pod is None:
        return SyncResult.DONE
    items: list[ClaimAllocation] = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
        item = await _pending_claim(ctx, pod=pod, pod_claim=pod_claim)
        if item is not None:
            items.append(item)
    if not items:
        return SyncResult.PERIODIC
    if potential_nodes:
        try:
            await ctx.driver.unsuitable_nodes(pod, claims=items, potential_nodes=potential_nodes)
        except Exception as err:
            raise SyncError(f"checking potential nodes: {err}") from err
    failure: SyncError | None = None
    if selected_node and not any(selected_node in item.unsuitable_nodes for item in items):
        failure = await _allocate_for_node(ctx, pod=pod, items=items, node=selected_node)
    written = await _update_status(ctx, psc, items)
    if failure is not None:
        raise failure
    return SyncResult.PERIODIC if written else SyncResult.RETRY_ON_UPDATE


async def _owning_pod(ctx: SyncContext, psc: Obj) -> Obj | None:
    """The pod the PSC belongs to, read from the API server; None when the PSC is obsolete."""
    try:
        pod = await ctx.client.get(kinds.PODS, meta.name(psc), meta.namespace(psc))
    except errors.StatusError as err:
        if errors.is_not_found(err):
            return None
        raise
    if meta.deletion_timestamp(pod):
        return None
    ref = meta.controller_ref(psc)
    if ref is None or ref.get("uid") != meta.uid(pod):
        return None
    return pod


async def _pending_claim(ctx: SyncContext, *, pod: Obj, pod_claim: Obj) -> ClaimAllocation | None:
    """The pod claim as a ClaimAllocation when this driver must allocate it, else None."""
    pod_claim_name = str(pod_claim.get("name", ""))
    try:
        claim_name, must_check_owner = dra.name(pod, pod_claim)
    except dra.ClaimNameError as err:
        raise SyncError(f"pod claim {pod_claim_name}: {err}") from err
    if claim_name is None:
        return None
    claim = ctx.claims.get(claim_name, meta.namespace(pod))
    if claim is None:
        return None
    if must_check_owner:
        not_owner = dra.is_for_pod(pod, claim)
        if not_owner is not None:
            raise _claim_error(f"pod claim {pod_claim_name}: {not_owner}", claim)
    spec = claim.get("spec") or {}
    if spec.get("allocationMode", WAIT_FOR_FIRST_CONSUMER) != WAIT_FOR_FIRST_CONSUMER:
        return None
    if dra.is_allocated(claim):
        return None
    try:
        resource_class = ctx.resource_class(str(spec.get("resourceClassName", "")))
    except errors.StatusError as err:
        raise _claim_error(f"pod claim {pod_claim_name}: {err}", claim) from err
    if resource_class.get("driverName") != ctx.driver_name:
        return None
    try:
        class_parameters, claim_parameters = await get_parameters(ctx, claim, resource_class)
    except SyncError as err:
        raise _claim_error(f"pod claim {pod_claim_name}: {err}", claim) from err
    return ClaimAllocation(
        pod_claim_name=pod_claim_name,
        claim=claim,
        resource_class=resource_class,
        claim_parameters=claim_parameters,
        class_parameters=class_parameters,
    )


async def _allocate_for_node(
    ctx: SyncContext, *, pod: Obj, items: list[ClaimAllocation], node: str
) -> SyncError | None:
    await allocate_claims(ctx, items, selected_node=node, selected_user=dra.pod_reference(pod))
    failed = [item for item in items if item.error is not None]
    if not failed:
        return None
    for item in failed:
        # [1.29+]: tell the scheduler to pick another node instead of retrying this one.
        if node not in item.unsuitable_nodes:
            item.unsuitable_nodes.append(node)
    clauses = " ".join(f"Claim {meta.name(item.claim)}: {item.error}." for item in failed)
    pod_key = f"{meta.namespace(pod)}/{meta.name(pod)}"
    return SyncError(
        f"allocation of one or more pod claims failed. {clauses}",
        concerns=tuple(
            (item.claim, f"allocation for pod {pod_key} on node {node} failed: {item.error}")
            for item in failed
        ),
    )


def _claim_error(message: str, claim: Obj) -> SyncError:
    """A failure about one claim: the claim gets the same Warning as the PodSchedulingContext."""
    return SyncError(message, concerns=((claim, message),))


STATUS_CONFLICT_RETRIES = 3
"""Immediate retries of the status write when only another status writer got in between."""


async def _update_status(ctx: SyncContext, psc: Obj, items: list[ClaimAllocation]) -> bool:
    """Merge the items' unsuitable nodes into `status.resourceClaims` and UpdateStatus when that
    changes something. False: a conflict that is not worth an error (another writer of the status,
    e.g. the other driver of a pod, got in first; the sync is simply repeated). Deliberately unlike
    upstream (docs/fidelity.md), which reports every failed write as a Warning event; a conflict is
    retried at once on the fresh object while the spec the answer was computed for is unchanged, and
    otherwise the sync is repeated once that write arrives."""
    for _ in range(STATUS_CONFLICT_RETRIES + 1):
        updated = _merged_status(psc, items)
        if updated is None:
            return True
        try:
            await ctx.client.update(kinds.POD_SCHEDULING_CONTEXTS, updated, subresource="status")
            return True
        except Exception as err:
            if not errors.is_conflict(err):
                raise SyncError(f"update unsuitable node status: {err}") from err
        fresh = await _fresh_with_same_spec(ctx, psc)
        if fresh is None:
            return False
        psc = fresh
    return False


async def _fresh_with_same_spec(ctx: SyncContext, psc: Obj) -> Obj | None:
    """The current PodSchedulingContext when a retry can succeed: None when it is gone, its
    spec (or identity) changed so that the answer must be computed again, or the conflicting
    write is not visible yet (same resourceVersion: it is still being committed)."""
    try:
        fresh = await ctx.client.get(
            kinds.POD_SCHEDULING_CONTEXTS, meta.name(psc), meta.namespace(psc)
        )
    except errors.StatusError:
        return None
    if (
        meta.uid(fresh) != meta.uid(psc)
        or meta.deletion_timestamp(fresh)
        or meta.resource_version(fresh) == meta.resource_version(psc)
    ):
        return None
    return fresh if semantic_equal(fresh.get("spec"), psc.get("spec")) else None


def _merged_status(psc: Obj, items: list[ClaimAllocation]) -> Obj | None:
    """A copy of the PSC with the items' entries merged in; None when nothing changes."""
    entries: list[Obj] = [dict(e) for e in (psc.get("status") or {}).get("resourceClaims") or []]
    changed = False
    for item in items:
        unsuitable = item.unsuitable_nodes[: dra.POD_SCHEDULING_NODE_LIST_MAX]
        entry = next((e for e in entries if e.get("name") == item.pod_claim_name), None)
        if entry is None:
            entries.append({"name": item.pod_claim_name, "unsuitableNodes": unsuitable})
            changed = True
        elif list(entry.get("unsuitableNodes") or []) != unsuitable:
            entry["unsuitableNodes"] = unsuitable
            changed = True
    if not changed:
        return None
    updated = meta.deep_copy(psc)
    updated.setdefault("status", {})["resourceClaims"] = entries
    return updated
