"""Per-attempt state of DynamicResources and its PodSchedulingContext handling (its 1.28
`stateData`).

`StateData` is written by PreFilter (an empty one first, so later phases always find one).
`claims` are informer snapshots, replaced only by the plugin's own successful writes. The
PodSchedulingContext is loaded lazily; `modify()` makes a private copy before the first
change, and `publish()` creates or updates it when dirty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from draplane.api import meta, selectors
from draplane.api.kinds import POD_SCHEDULING_CONTEXTS
from draplane.api.meta import Obj, deep_copy
from draplane.api.nodeselector import NodeSelector
from draplane.api.types import Pod
from draplane.api.types.resourcev1alpha2 import PodSchedulingContext, ResourceClaim
from draplane.client.interface import Client
from draplane.scheduler.framework import Lister, NodeInfo, StateKey
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.dynamicresources.claims import (
    PodClaim,
    allocation_mode,
)

NodePredicate = Callable[[NodeInfo], bool]


def node_predicate(selector: NodeSelector) -> NodePredicate:
    """`selector.matches` as a function of a NodeInfo. Drivers publish `availableOnNodes` as
    one term of `In` label requirements (e.g. the hostname); that shape becomes a set lookup
    on the node's labels, since Filter asks it for every node."""
    terms = selector.terms
    if len(terms) == 1 and not terms[0].fields and terms[0].labels:
        required = [(r.key, frozenset(r.values)) for r in terms[0].labels]
        if all(r.operator == selectors.IN for r in terms[0].labels):
            if len(required) == 1:
                key, values = required[0]
                return lambda node_info: node_info.labels.get(key) in values
            return lambda node_info: all(node_info.labels.get(k) in v for k, v in required)
    return lambda node_info: selector.matches(node_info.node)


@dataclass(frozen=True, slots=True)
class ClaimFacts:
    index: int
    pod_claim_name: str
    allocated: bool
    deallocation_requested: bool
    mode: str
    class_name: str

    @classmethod
    def of(cls, index: int, pod_claim: PodClaim[ResourceClaim]) -> ClaimFacts:
        claim = pod_claim.claim
        status = claim.get("status") or {}
        return cls(
            index=index,
            pod_claim_name=pod_claim.pod_claim_name,
            allocated=bool(status.get("allocation")),
            deallocation_requested=bool(status.get("deallocationRequested")),
            mode=allocation_mode(claim),
            class_name=str((claim.get("spec") or {}).get("resourceClassName") or ""),
        )


class SchedulingContextError(Exception):
    """The PodSchedulingContext cannot be used (not owned by the pod)."""


@dataclass
class StateData:
    claims: list[PodClaim[ResourceClaim]] = field(default_factory=list)
    available_on_nodes: list[NodePredicate | None] = field(default_factory=list)
    """Per claim: where its allocation is available (None: everywhere or not allocated)."""
    unavailable_claims: set[int] = field(default_factory=set)
    """Indices of allocated delayed claims whose availableOnNodes excluded some node."""
    class_selectors: dict[str, NodePredicate | None] = field(default_factory=dict)
    """ResourceClass name -> its suitableNodes as a predicate, cached for the attempt."""
    scheduling_ctx: PodSchedulingContext | None = None
    scheduling_ctx_dirty: bool = False
    delayed_checks: dict[int, tuple[NodePredicate | None, frozenset[str]]] = field(
        default_factory=dict
    )
    """Claim index -> (class suitableNodes, unsuitable nodes), for Filter of delayed claims."""
    _facts: list[ClaimFacts] | None = None
    _unsuitable: dict[str, frozenset[str]] = field(default_factory=dict)
    _unsuitable_of: int = 0
    """id() of the PodSchedulingContext `_unsuitable` was computed from."""

    def claim_facts(self) -> list[ClaimFacts]:
        """What Filter reads of each claim, extracted once per attempt (Filter runs before
        any phase replaces a claim)."""
        if self._facts is None:
            self._facts = [ClaimFacts.of(i, pc) for i, pc in enumerate(self.claims)]
        return self._facts

    def unsuitable_set(self, psc: PodSchedulingContext, pod_claim_name: str) -> frozenset[str]:
        """The drivers' unsuitable nodes for the pod claim in `psc`, as a set (cached)."""
        if self._unsuitable_of != id(psc):
            self._unsuitable, self._unsuitable_of = {}, id(psc)
        found = self._unsuitable.get(pod_claim_name)
        if found is None:
            found = self._unsuitable[pod_claim_name] = frozenset(
                unsuitable_nodes(psc, pod_claim_name) or ()
            )
        return found

    def scheduling_context(self, *, pod: Pod | Obj, lister: Lister) -> PodSchedulingContext:
        """The pod's PodSchedulingContext (from the informer, or a new in-memory object)."""
        if self.scheduling_ctx is not None:
            return self.scheduling_ctx
        md = pod["metadata"]
        psc = cast("PodSchedulingContext | None", lister.get(md["name"], md.get("namespace") or ""))
        if psc is None:
            psc = {
                "apiVersion": POD_SCHEDULING_CONTEXTS.api_version,
                "kind": POD_SCHEDULING_CONTEXTS.kind,
                "metadata": {
                    "name": md["name"],
                    "namespace": md.get("namespace") or "",
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": md["name"],
                            "uid": md.get("uid") or "",
                            "controller": True,
                        }
                    ],
                },
                "spec": {},
            }
            self.scheduling_ctx_dirty = False
        elif not _controlled_by(psc, md.get("uid") or ""):
            raise SchedulingContextError(
                f"PodSchedulingContext object with UID {psc['metadata'].get('uid', '')} is not "
                f"owned by Pod {md.get('namespace', '')}/{md['name']}"
            )
        self.scheduling_ctx = psc
        return psc

    def modify(self) -> PodSchedulingContext:
        """A private, changeable copy of the loaded PodSchedulingContext (marked dirty)."""
        assert self.scheduling_ctx is not None, "scheduling_context() must be called first"
        if not self.scheduling_ctx_dirty:
            self.scheduling_ctx = cast(PodSchedulingContext, deep_copy(self.scheduling_ctx))
            self.scheduling_ctx_dirty = True
        self.scheduling_ctx.setdefault("spec", {})
        return self.scheduling_ctx

    async def publish(self, client: Client) -> None:
        """Create (no uid yet) or update the PodSchedulingContext; raises StatusError."""
        psc = self.scheduling_ctx
        if psc is None or not self.scheduling_ctx_dirty:
            return
        namespace = psc["metadata"].get("namespace") or ""
        if psc["metadata"].get("uid"):
            result = await client.update(POD_SCHEDULING_CONTEXTS, cast(Obj, psc))
        else:
            result = await client.create(POD_SCHEDULING_CONTEXTS, cast(Obj, psc), namespace)
        self.scheduling_ctx = cast(PodSchedulingContext, result)
        self.scheduling_ctx_dirty = False


def _controlled_by(obj: PodSchedulingContext, uid: str) -> bool:
    for ref in meta.metadata(obj).get("ownerReferences") or ():
        if ref.get("controller"):
            return bool(ref.get("uid") == uid)
    return False


def unsuitable_nodes(psc: PodSchedulingContext, pod_claim_name: str) -> list[str] | None:
    """The driver's unsuitable nodes for one pod claim, or None when it has not answered."""
    for entry in (psc.get("status") or {}).get("resourceClaims") or ():
        if entry.get("name") == pod_claim_name:
            nodes: list[str] = entry.get("unsuitableNodes") or []
            return nodes
    return None


STATE_KEY: StateKey[StateData] = StateKey(names.DYNAMIC_RESOURCES)
