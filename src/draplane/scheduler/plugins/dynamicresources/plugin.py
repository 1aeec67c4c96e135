"""The DynamicResources plugin (Kubernetes 1.28 classic DRA: kubernetes/kubernetes
pkg/scheduler/framework/plugins/dynamicresources): one job per phase.

PreEnqueue: all claims exist. PreFilter: claims usable at all. Filter: per-node fit
(availableOnNodes, class suitableNodes, drivers' unsuitableNodes). PostFilter: ask for
deallocation of a claim that keeps the pod off every node. PreScore: publishable potential
nodes. Reserve: for unallocated claims select a node in the PodSchedulingContext. PreBind
(the 1.30 order: these writes leave the serial scheduling cycle): publish that selection and stop
to wait for the driver, or reserve the allocated claims. Unreserve: publish a selection not yet
published, undo reservations. PostBind: delete the PodSchedulingContext. A failed write to a
claim (reservation, deallocation request) is also a Warning event on that claim.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any, cast

from draplane import dra
from draplane.api import errors
from draplane.api.kinds import POD_SCHEDULING_CONTEXTS, RESOURCE_CLAIMS, RESOURCE_CLASSES
from draplane.api.meta import Obj, deep_copy
from draplane.api.nodeselector import NodeSelector
from draplane.api.types.resourcev1alpha2 import ResourceClaim, ResourceClass
from draplane.dra.resourcev1 import RESOURCE_SLICES
from draplane.scheduler.framework import (
    GVK,
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Handle,
    NodeInfo,
    PluginArgs,
    PodInfo,
    QueueingHint,
    Status,
    lister_get,
)
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.dynamicresources import hints
from draplane.scheduler.plugins.dynamicresources.args import parse_args
from draplane.scheduler.plugins.dynamicresources.claims import (
    IMMEDIATE,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimLookupError,
    PodClaim,
    allocation_mode,
    claim_status,
    deallocation_candidates,
    pod_resource_claims,
    pre_enqueue as claims_pre_enqueue,
)
from draplane.scheduler.plugins.dynamicresources.state import (
    STATE_KEY,
    ClaimFacts,
    NodePredicate,
    SchedulingContextError,
    StateData,
    node_predicate,
    unsuitable_nodes,
)
from draplane.scheduler.plugins.dynamicresources.structured import StructuredDynamicResources

log = logging.getLogger(__name__)

FAILED_SCHEDULING = "FailedScheduling"
"""The reason of the Warning a claim gets when the scheduler fails to write it."""

# Filter answers for every node: one value each instead of one per node.
_REALLOCATE = Status.unresolvable("resourceclaim must be reallocated")
_NOT_AVAILABLE = Status.unresolvable("resourceclaim not available on the node")
_EXCLUDED_BY_CLASS = Status.unresolvable("excluded by resource class node filter")
_UNSUITABLE = Status.unresolvable("resourceclaim cannot be allocated for the node (unsuitable)")


class DynamicResources:
    name = names.DYNAMIC_RESOURCES

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._client = handle.client
        self._claims = handle.lister(RESOURCE_CLAIMS)
        self._classes = handle.lister(RESOURCE_CLASSES)
        self._contexts = handle.lister(POD_SCHEDULING_CONTEXTS)

    # -- queue ---------------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_claim_change,
                hints.CLAIM_SELECTOR,
            ),
            ClusterEventWithHint(
                ClusterEvent(GVK.POD_SCHEDULING_CONTEXT, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_scheduling_context_change,
                hints.SCHEDULING_CONTEXT_SELECTOR,
            ),
            ClusterEventWithHint(
                ClusterEvent(GVK.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
        ]

    def is_schedulable_after_claim_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        return hints.is_schedulable_after_claim_change(
            pod=pod, old=old, new=new, claims=self._claims, contexts=self._contexts
        )

    def is_schedulable_after_scheduling_context_change(
        self, pod: Obj, old: Any, new: Any
    ) -> QueueingHint:
        return hints.is_schedulable_after_scheduling_context_change(
            pod=pod, old=old, new=new, claims=self._claims
        )

    def pre_enqueue(self, pod: Obj) -> Status:
        return claims_pre_enqueue(pod, self._claims)

    # -- scheduling cycle ----------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod_info: PodInfo) -> Status:
        data = StateData()
        state.write(STATE_KEY, data)
        try:
            claims = cast(
                list[PodClaim[ResourceClaim]], pod_resource_claims(pod_info.pod, self._claims)
            )
        except ClaimLookupError as err:
            return Status.unresolvable(str(err))
        if not claims:
            return SKIP
        selectors: list[NodePredicate | None] = []
        for pod_claim in claims:
            claim = pod_claim.claim
            status = claim.get("status") or {}
            allocation = status.get("allocation")
            if allocation_mode(claim) == IMMEDIATE and not allocation:
                return Status.unresolvable("unallocated immediate resourceclaim")
            if status.get("deallocationRequested"):
                return Status.unresolvable("resourceclaim must be reallocated")
            if (
                allocation
                and not dra.can_be_reserved(claim)
                and not dra.is_reserved_for_pod(pod_info.pod, claim)
            ):
                return Status.unresolvable("resourceclaim in use")
            selector = None
            if allocation and allocation.get("availableOnNodes"):
                try:
                    available = cast(Obj, allocation["availableOnNodes"])
                    selector = node_predicate(NodeSelector.parse(available))
                except ValueError as err:
                    return Status.error(str(err))
            selectors.append(selector)
        data.claims = claims
        data.available_on_nodes = selectors
        return SUCCESS

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        data = state.read(STATE_KEY)
        if not data.claims:
            return SUCCESS
        unavailable: list[ClaimFacts] | None = None
        for facts in data.claim_facts():
            if facts.allocated:
                available = data.available_on_nodes[facts.index]
                if available is not None and not available(node_info):
                    unavailable = unavailable or []
                    unavailable.append(facts)
                continue
            if facts.deallocation_requested:
                return _REALLOCATE
            if facts.mode != WAIT_FOR_FIRST_CONSUMER:
                return Status.error(f"internal error, unexpected allocation mode {facts.mode}")
            rejection = self._filter_delayed(data, pod_info, facts, node_info)
            if rejection is not None:
                return rejection
        if unavailable:
            # Only delayed-allocation claims may be deallocated later (PostFilter); an
            # immediate one would be re-allocated at random.
            data.unavailable_claims.update(
                f.index for f in unavailable if f.mode == WAIT_FOR_FIRST_CONSUMER
            )
            return _NOT_AVAILABLE
        return SUCCESS

    def _filter_delayed(
        self, data: StateData, pod_info: PodInfo, facts: ClaimFacts, node_info: NodeInfo
    ) -> Status | None:
        checks = data.delayed_checks.get(facts.index)
        if checks is None:
            # Looked up once per attempt; failures are not kept, so every node reports them.
            try:
                suitable = self._class_predicate(data, facts.class_name)
                psc = data.scheduling_context(pod=pod_info.pod, lister=self._contexts)
            except _FilterError as err:
                return err.status
            except SchedulingContextError as err:
                return Status.error(str(err))
            checks = (suitable, data.unsuitable_set(psc, facts.pod_claim_name))
            data.delayed_checks[facts.index] = checks
        suitable, unsuitable = checks
        if suitable is not None and not suitable(node_info):
            return _EXCLUDED_BY_CLASS
        if node_info.name in unsuitable:
            return _UNSUITABLE
        return None

    def _class_predicate(self, data: StateData, class_name: str) -> NodePredicate | None:
        """The ResourceClass's suitableNodes as a predicate (None: every node)."""
        if class_name not in data.class_selectors:
            try:
                resource_class = cast(
                    ResourceClass, lister_get(self._classes, RESOURCE_CLASSES, name=class_name)
                )
            except errors.StatusError as err:
                raise _FilterError(Status.error(f"look up resource class: {err}")) from None
            suitable = resource_class.get("suitableNodes")
            try:
                data.class_selectors[class_name] = (
                    node_predicate(NodeSelector.parse(cast(Obj, suitable))) if suitable else None
                )
            except ValueError as err:
                raise _FilterError(Status.error(f"potential node filter: {err}")) from None
        return data.class_selectors[class_name]

    async def post_filter(
        self, state: CycleState, pod_info: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> Status:
        data = state.get(STATE_KEY)
        if data is None or not data.claims:
            return Status.unschedulable("no new claims to deallocate")
        for index in deallocation_candidates(data.claims, data.unavailable_claims, pod_info.uid):
            claim = data.claims[index].claim
            changed = deep_copy(claim)
            changed_status = changed.setdefault("status", {})
            changed_status["deallocationRequested"] = True
            changed_status.pop("reservedFor", None)
            try:
                updated = await self._client.update(RESOURCE_CLAIMS, changed, subresource="status")
            except errors.StatusError as err:
                self._claim_warning(claim, f"requesting deallocation for pod {pod_info.key}: {err}")
                return Status.error(str(err))
            data.claims[index] = PodClaim(
                data.claims[index].pod_claim_name, cast(ResourceClaim, updated)
            )
            return SUCCESS
        return Status.unschedulable("still not schedulable")

    def pre_score(self, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Status:
        data = state.read(STATE_KEY)
        if not data.claims:
            return SUCCESS
        try:
            psc = data.scheduling_context(pod=pod_info.pod, lister=self._contexts)
        except SchedulingContextError as err:
            return Status.error(str(err))
        pending = any(not claim_status(pc.claim).get("allocation") for pc in data.claims)
        if not pending:
            return SUCCESS
        potential = set((psc.get("spec") or {}).get("potentialNodes") or ())
        if all(node.name in potential for node in nodes):
            return SUCCESS
        node_names = [node.name for node in nodes]
        if len(node_names) > dra.POD_SCHEDULING_NODE_LIST_MAX:
            node_names = random.sample(node_names, dra.POD_SCHEDULING_NODE_LIST_MAX)
        data.modify()["spec"]["potentialNodes"] = sorted(node_names)
        return SUCCESS

    async def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        data = state.read(STATE_KEY)
        if not data.claims:
            return SUCCESS
        try:
            psc = data.scheduling_context(pod=pod_info.pod, lister=self._contexts)
        except SchedulingContextError as err:
            return Status.error(str(err))
        pending = [pc for pc in data.claims if not claim_status(pc.claim).get("allocation")]
        if not pending:
            # The reservations are written in PreBind (1.30), outside the scheduling cycle.
            return SUCCESS
        # Reservations wait until every claim is allocated (1.29 order): reserving early and
        # undoing it in Unreserve would requeue the pod with its own claim updates.
        with_info = sum(1 for pc in pending if unsuitable_nodes(psc, pc.pod_claim_name) is not None)
        if not (psc.get("spec") or {}).get("potentialNodes"):
            data.modify()["spec"]["potentialNodes"] = [node_name]
        if len(pending) == 1 or with_info == len(pending):
            current = data.scheduling_ctx or psc
            if (current.get("spec") or {}).get("selectedNode") != node_name:
                # Published by PreBind (1.30), so the scheduling cycle does not wait for the
                # write; by Unreserve when the attempt fails before that.
                data.modify()["spec"]["selectedNode"] = node_name
                return SUCCESS
            return await self._publish_and_hold(data, pod_info, node_name)
        try:
            await data.publish(self._client)
        except errors.StatusError as err:
            return Status.error(str(err))
        return Status.unresolvable("waiting for resource driver to provide information")

    async def pre_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        data = state.get(STATE_KEY)
        if data is None or not data.claims:
            return SUCCESS
        if data.scheduling_ctx_dirty:
            # Reserve selected the node: ask the drivers to allocate, and stop binding.
            return await self._publish_and_hold(data, pod_info, node_name)
        for index, pod_claim in enumerate(data.claims):
            if dra.is_reserved_for_pod(pod_info.pod, pod_claim.claim):
                continue
            changed = deep_copy(pod_claim.claim)
            changed.setdefault("status", {}).setdefault("reservedFor", []).append(
                dra.pod_reference(pod_info.pod)
            )
            try:
                updated = await self._client.update(RESOURCE_CLAIMS, changed, subresource="status")
            except errors.StatusError as err:
                self._claim_warning(
                    pod_claim.claim, f"reserving the claim for pod {pod_info.key}: {err}"
                )
                return Status.error(str(err))
            # Kept in state (1.29 behaviour) so that Unreserve undoes this reservation.
            data.claims[index] = PodClaim(pod_claim.pod_claim_name, cast(ResourceClaim, updated))
        return SUCCESS

    async def _publish_and_hold(self, data: StateData, pod_info: PodInfo, node_name: str) -> Status:
        """Write the PodSchedulingContext (when it changed) that asks the drivers to allocate
        for `node_name`, and hold the pod there, so that the pods scheduled meanwhile spread."""
        try:
            await data.publish(self._client)
        except errors.StatusError as err:
            return Status.error(str(err))
        self._handle.holds.hold(pod_info, node_name)
        return Status.unresolvable("waiting for resource driver to allocate resource")

    async def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        data = state.get(STATE_KEY)
        if data is None:
            return
        if data.scheduling_ctx_dirty:
            # Reserve's decision was not published (the attempt failed before PreBind): the
            # drivers still learn the potential and selected nodes (1.30).
            try:
                await data.publish(self._client)
            except errors.StatusError as err:
                log.warning("Publishing PodSchedulingContext %s failed: %s", pod_info.key, err)
        for index, pod_claim in enumerate(data.claims):
            claim = pod_claim.claim
            if not claim_status(claim).get("allocation"):
                continue
            if not dra.is_reserved_for_pod(pod_info.pod, claim):
                continue
            changed = deep_copy(claim)
            status = changed.setdefault("status", {})
            status["reservedFor"] = [
                e for e in status.get("reservedFor") or () if e.get("uid") != pod_info.uid
            ]
            try:
                updated = await self._client.update(RESOURCE_CLAIMS, changed, subresource="status")
            except errors.StatusError as err:
                log.warning(
                    "Unreserve of claim %s for pod %s failed: %s",
                    claim["metadata"].get("name"),
                    pod_info.key,
                    err,
                )
                self._claim_warning(claim, f"unreserving the claim for pod {pod_info.key}: {err}")
                continue
            data.claims[index] = PodClaim(pod_claim.pod_claim_name, cast(ResourceClaim, updated))

    async def post_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        data = state.get(STATE_KEY)
        if data is None or not data.claims:
            return
        try:
            await self._client.delete(POD_SCHEDULING_CONTEXTS, pod_info.name, pod_info.namespace)
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                log.warning("Deleting PodSchedulingContext %s failed: %s", pod_info.key, err)

    def _claim_warning(self, claim: ResourceClaim, message: str) -> None:
        """A write to the claim failed: the claim's Events say so (the pod's FailedScheduling
        event only names the attempt)."""
        self._handle.event_recorder.event(cast(Obj, claim), "Warning", FAILED_SCHEDULING, message)


class _FilterError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def new_classic(args: PluginArgs, handle: Handle) -> DynamicResources:
    """Classic DRA's plugin (1.28), which takes no arguments."""
    if args:
        raise errors.invalid_object(
            "DynamicResourcesArgs",
            names.DYNAMIC_RESOURCES,
            [errors.forbidden("args", "DynamicResources takes no arguments")],
        )
    return DynamicResources(handle)


def new_structured(args: PluginArgs, handle: Handle) -> StructuredDynamicResources:
    """The structured-parameters plugin (1.36) with its `DynamicResourcesArgs` (`args.py`)."""
    return StructuredDynamicResources(handle, args=parse_args(args))


def new(args: PluginArgs, handle: Handle) -> DynamicResources | StructuredDynamicResources:
    """The classic plugin, or the structured one when the handle serves ResourceSlices (the
    1.36 mode's informers)."""
    if RESOURCE_SLICES in handle.listers:
        return new_structured(args, handle)
    return new_classic(args, handle)
