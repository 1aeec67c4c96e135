"""The DynamicResources plugin for structured parameters (resource.k8s.io/v1, spec section 4):
the scheduler allocates devices itself.

PreEnqueue: the pod's claims exist (the lookups shared with the classic mode). PreFilter: claims
usable, classes exist, one Allocator for the cycle over the allocated and in-flight devices.
Filter: allocated claims' node selectors, the rest through `Allocator.find` on the node (the
search is kept). PostFilter: clear one allocation that keeps the pod off every node. Reserve:
the chosen node's AllocationResults, built now, become in-flight allocations. Unreserve: drop
them and this pod's `reservedFor` entries. PreBind: write the finalizer, `status.allocation`
and `reservedFor`, assume the answer.
Extended resources backed by DRA (`extended.py`) join Filter, Reserve, PreBind and Unreserve;
the claim writes of PreBind, Unreserve and PostFilter are in `structured_writes.py`. PreBind
then waits for devices' binding conditions (`bindingconditions.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from draplane import dra
from draplane.api import errors, meta
from draplane.api.meta import Obj, deep_copy
from draplane.api.nodeselector import NodeSelector
from draplane.api.types import ResourceClaim
from draplane.clock import format_time
from draplane.dra.resourcev1 import (
    DELETE_PROTECTION_FINALIZER,
    DEVICE_CLASSES,
    RESERVED_FOR_MAX_SIZE,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
)
from draplane.dra.structured import (
    AllocationError,
    Allocator,
    Answer,
    FailedAllocationOnNode,
    SliceIndex,
)
from draplane.dra.structured.state import Features
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
    PodInfo,
    QueueingHint,
    StateKey,
    Status,
)
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.dynamicresources import bindingconditions, structured_hints
from draplane.scheduler.plugins.dynamicresources.args import DynamicResourcesArgs
from draplane.scheduler.plugins.dynamicresources.assume import ClaimTracker
from draplane.scheduler.plugins.dynamicresources.claims import (
    ClaimLookupError,
    PodClaim,
    deallocation_candidates,
    pod_resource_claims,
    pre_enqueue as claims_pre_enqueue,
)
from draplane.scheduler.plugins.dynamicresources.extended import (
    ExtendedResources,
    ExtendedState,
    NodeClaim,
    recorded_claim,
)
from draplane.scheduler.plugins.dynamicresources.state import NodePredicate, node_predicate
from draplane.scheduler.plugins.dynamicresources.structured_writes import (
    BindError,
    bind_claim,
    deallocate,
    drop_reservation,
)

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
_CANNOT_ALLOCATE = Status.unresolvable(CANNOT_ALLOCATE)
_NOT_AVAILABLE = Status.unresolvable(NOT_AVAILABLE)
TIMED_OUT = "timed out trying to allocate devices"
_TIMED_OUT = Status.unresolvable(TIMED_OUT)


def _on_no_node(_node: NodeInfo) -> bool:
    return False


@dataclass
class StructuredState:
    claims: list[PodClaim[ResourceClaim]] = field(default_factory=list)
    to_allocate: list[int] = field(default_factory=list)
    """Indices of the claims the scheduler allocates in this cycle."""
    allocating: tuple[ResourceClaim, ...] = ()
    """Those claims (the same sequence for every Filter call, so the allocator's prepared
    requests are reused)."""
    selectors: dict[int, NodePredicate] = field(default_factory=dict)
    """Allocated claims with a node selector."""
    allocator: Allocator | None = None
    results: dict[str, Answer] = field(default_factory=dict)
    """Node name -> the allocator's answer (Filter); Reserve builds the node's
    AllocationResults, one per `to_allocate` claim, from it."""
    reserved: set[int] = field(default_factory=set)
    """Claims PreBind added this pod to the `reservedFor` of (for Unreserve)."""
    extended: ExtendedState | None = None
    """The pod's DRA-backed extended resources (`extended.py`)."""


STRUCTURED_STATE_KEY: StateKey[StructuredState] = StateKey(names.DYNAMIC_RESOURCES)


def _class_names(claim: ResourceClaim) -> list[tuple[str, str]]:
    """(request name, device class) of every request and subrequest."""
    out: list[tuple[str, str]] = []
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        name = str(request.get("name") or "")
        exactly = request.get("exactly")
        if exactly:
            out.append((name, str(exactly.get("deviceClassName") or "")))
        for sub in request.get("firstAvailable") or ():
            out.append((f"{name}/{sub.get('name', '')}", str(sub.get("deviceClassName") or "")))
    return out


class StructuredDynamicResources:
    name = names.DYNAMIC_RESOURCES

    def __init__(
        self,
        handle: Handle,
        *,
        features: Features | None = None,
        args: DynamicResourcesArgs | None = None,
    ) -> None:
        self._handle = handle
        self.args = args or DynamicResourcesArgs()
        self.monotonic: Callable[[], float] = time.monotonic
        """The clock of `filterTimeout` (the time one node's allocation takes)."""
        self._client = handle.client
        self.tracker = ClaimTracker(
            handle.lister(RESOURCE_CLAIMS_V1), handle.event_sources.get(RESOURCE_CLAIMS_V1)
        )
        self._classes = handle.lister(DEVICE_CLASSES)
        self._slices = handle.lister(RESOURCE_SLICES)
        self._features = features or Features()
        self._slice_index: tuple[tuple[tuple[str, str], ...], SliceIndex] | None = None
        self._extended = ExtendedResources(self._client, self.tracker, self._classes)
        slice_events = handle.event_sources.get(RESOURCE_SLICES)
        self._slices_followed = slice_events is not None
        if slice_events is not None:
            slice_events.add_handler(
                on_add=self._slices_changed,
                on_update=lambda old, new: self._slices_changed(new),
                on_delete=self._slices_changed,
            )

    # -- queue ---------------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    GVK.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE | ActionType.DELETE
                ),
                self.is_schedulable_after_claim_change,
                structured_hints.CLAIM_SELECTOR,
            ),
            ClusterEventWithHint(
                ClusterEvent(GVK.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(GVK.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    GVK.NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
        ]

    def is_schedulable_after_claim_change(self, pod: Obj, old: Any, new: Any) -> QueueingHint:
        return structured_hints.is_schedulable_after_claim_change(
            pod=pod, old=old, new=new, claims=self.tracker
        )

    def pre_enqueue(self, pod: Obj) -> Status:
        return claims_pre_enqueue(pod, self.tracker)

    # -- scheduling cycle ----------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod_info: PodInfo) -> Status:
        data = StructuredState()
        state.write(STRUCTURED_STATE_KEY, data)
        try:
            claims = cast(
                list[PodClaim[ResourceClaim]], pod_resource_claims(pod_info.pod, self.tracker)
            )
            claims += recorded_claim(pod_info.pod, self.tracker)
        except ClaimLookupError as err:
            return Status.unresolvable(str(err))
        data.extended = self._extended.pre_filter(pod_info)
        if not claims and data.extended is None:
            return SKIP
        for index, pod_claim in enumerate(claims):
            claim = pod_claim.claim
            status = claim.get("status") or {}
            allocation = status.get("allocation")
            if allocation:
                reserved = status.get("reservedFor") or ()
                if len(reserved) >= RESERVED_FOR_MAX_SIZE and not dra.is_reserved_for_pod(
                    pod_info.pod, claim
                ):
                    return Status.unresolvable("resourceclaim in use")
                if self._features.device_binding_and_status and bindingconditions.binding_failed(
                    claim, clock=self._handle.clock, timeout=self.args.binding_timeout
                ):
                    # Available on no node, so PostFilter deallocates it (upstream's Filter
                    # counts it among the unavailable claims) and the next attempt picks
                    # other devices.
                    data.selectors[index] = _on_no_node
                elif allocation.get("nodeSelector"):
                    try:
                        data.selectors[index] = node_predicate(
                            NodeSelector.parse(cast(Obj, allocation["nodeSelector"]))
                        )
                    except ValueError as err:
                        return Status.error(str(err))
                continue
            flying = self.tracker.in_flight(meta.uid(claim))
            if flying is not None and flying.pod_uid != pod_info.uid:
                return Status.unschedulable(
                    f"resource claim {meta.namespaced_key(claim)} is in the process of being "
                    "allocated"
                )
            for request, class_name in _class_names(claim):
                if self._classes.get(class_name) is None:
                    return Status.unresolvable(
                        f"request {request}: device class {class_name} does not exist"
                    )
            data.to_allocate.append(index)
        data.claims = claims
        data.allocating = tuple(claims[i].claim for i in data.to_allocate)
        if data.to_allocate or data.extended is not None:
            data.allocator = Allocator(
                classes=lambda n: self._classes.get(n),
                slices=self._index(),
                allocated=self.tracker.allocated_state(),
                features=self._features,
            )
        return SUCCESS

    def _claim(self, name: str, namespace: str) -> ResourceClaim | None:
        """The claim as the assume cache has it."""
        return cast("ResourceClaim | None", self.tracker.get(name, namespace))

    def _slices_changed(self, _obj: Any) -> None:
        self._slice_index = None

    def _index(self) -> SliceIndex:
        """The ResourceSlices indexed once per set of slice versions (its per-node pools stay
        cached while no slice changes; with the informer's events, until the next one)."""
        if self._slices_followed and self._slice_index is not None:
            return self._slice_index[1]
        slices = self._slices.list()
        key = tuple((meta.uid(s), meta.resource_version(s)) for s in slices)
        if self._slice_index is None or self._slice_index[0] != key:
            self._slice_index = (key, SliceIndex(slices))
        return self._slice_index[1]

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        data = state.read(STRUCTURED_STATE_KEY)
        if not data.claims and data.extended is None:
            return SUCCESS
        for selector in data.selectors.values():
            if not selector(node_info):
                return _NOT_AVAILABLE
        claims = data.allocating
        node_claim: NodeClaim | None = None
        if data.extended is not None:
            node_claim = self._extended.node_claim(data.extended, pod_info, node_info)
            if node_claim is not None:
                claims = (*claims, node_claim.claim)
        if not claims:
            return SUCCESS
        assert data.allocator is not None
        expired = self._filter_deadline()
        try:
            found = data.allocator.find(node_info.node, claims, is_cancelled=expired)
        except FailedAllocationOnNode as err:
            return Status.unresolvable(str(err))
        except AllocationError as err:
            if expired is not None and expired():
                return _TIMED_OUT
            return Status.error(str(err))
        if found is None:
            return _CANNOT_ALLOCATE
        if node_claim is not None and data.extended is not None:
            self._extended.filtered(data.extended, node_info.name, node_claim)
        data.results[node_info.name] = found
        return SUCCESS

    def _filter_deadline(self) -> Callable[[], str | None] | None:
        """`filterTimeout` for one node's allocation (None when 0: no limit); the search asks
        it at every step and stops once it answers."""
        timeout = self.args.filter_timeout
        if timeout <= 0:
            return None
        now = self.monotonic
        deadline = now() + timeout

        def expired() -> str | None:
            return "filter timeout" if now() > deadline else None

        return expired

    async def post_filter(
        self, state: CycleState, pod_info: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> Status:
        data = state.get(STRUCTURED_STATE_KEY)
        if data is None or not data.claims:
            return Status.unschedulable("no new claims to deallocate")
        for index in deallocation_candidates(data.claims, data.selectors, pod_info.uid):
            try:
                updated = await deallocate(self._client, self.tracker, data.claims[index].claim)
            except errors.StatusError as err:
                return Status.error(str(err))
            data.claims[index] = PodClaim(data.claims[index].pod_claim_name, updated)
            return Status.unschedulable("deallocation of ResourceClaim completed")
        return Status.unschedulable("still not schedulable")

    async def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        data = state.read(STRUCTURED_STATE_KEY)
        found = data.results.get(node_name)
        results: list[Mapping[str, Any]] = []
        if found is not None:
            try:
                results = list(found.results())
            except AllocationError as err:
                return Status.error(str(err))
        if data.extended is not None and node_name in data.extended.node_claims:
            # The extended-resource claim was allocated last, after the pod's own claims.
            self._extended.reserve(data.extended, pod_info, node_name, results.pop())
        if not data.to_allocate:
            return SUCCESS
        if found is None:
            return Status.error(f"internal error: no allocation results for node {node_name}")
        for index, allocation in zip(data.to_allocate, results, strict=True):
            claim = deep_copy(data.claims[index].claim)
            finalizers = claim["metadata"].setdefault("finalizers", [])
            if DELETE_PROTECTION_FINALIZER not in finalizers:
                finalizers.append(DELETE_PROTECTION_FINALIZER)
            claim.setdefault("status", {})["allocation"] = deep_copy(dict(allocation))
            if not self.tracker.set_in_flight(claim, pod_info.uid):
                return Status.unschedulable(
                    f"resource claim {meta.namespaced_key(claim)} is in the process of being "
                    "allocated"
                )
        return SUCCESS

    async def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        data = state.get(STRUCTURED_STATE_KEY)
        if data is None:
            return
        if data.extended is not None:
            await self._extended.unreserve(data.extended, pod_info)
        for index in data.to_allocate:
            self.tracker.drop_in_flight(meta.uid(data.claims[index].claim), pod_info.uid)
        for index in sorted(data.reserved):
            name = data.claims[index].claim["metadata"]["name"]
            await drop_reservation(self._client, self.tracker, name, pod_info)
        data.reserved.clear()

    async def pre_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        data = state.get(STRUCTURED_STATE_KEY)
        if data is None or (not data.claims and data.extended is None):
            return SUCCESS
        # When the binding timeout of devices with binding conditions starts.
        allocation_timestamp = (
            format_time(self._handle.clock.now())
            if self._features.device_binding_and_status
            else None
        )
        for index, pod_claim in enumerate(data.claims):
            try:
                updated = await bind_claim(
                    self._client, self.tracker, pod_claim, pod_info, index in data.to_allocate,
                    allocation_timestamp=allocation_timestamp,
                )  # fmt: skip
            except BindError as err:
                return Status.error(str(err))
            except errors.StatusError as err:
                return Status.error(f"update claim {meta.namespaced_key(pod_claim.claim)}: {err}")
            if updated is not None:
                data.reserved.add(index)
                data.claims[index] = PodClaim(pod_claim.pod_claim_name, updated)
        if data.extended is not None:
            try:
                await self._extended.pre_bind(data.extended, pod_info, node_name)
            except errors.StatusError as err:
                return Status.error(f"create extended resource claim: {err}")
        if self._features.device_binding_and_status:
            claims = [(pod_info.namespace, c.claim["metadata"]["name"]) for c in data.claims]
            try:
                await bindingconditions.wait_until_bound(
                    pod_info.pod,
                    node_name,
                    claims,
                    get=self._claim,
                    clock=self._handle.clock,
                    timeout=self.args.binding_timeout,
                    events=self._handle.event_recorder,
                )
            except bindingconditions.BindingError as err:
                return Status.error(str(err))
        return SUCCESS
