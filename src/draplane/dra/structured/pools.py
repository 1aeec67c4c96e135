"""Gathering the resource pools a node can use (structured/internal/incubating/pools_incubating.go).

`SliceIndex` indexes all ResourceSlices once per scheduling cycle; `SliceIndex.gather(node)` returns
the node's pools, sorted by driver then pool name (pools with binding-condition devices last),
slices sorted by name. Only the newest generation of a pool counts; a pool is incomplete when
fewer than `resourceSliceCount` slices of that generation exist and invalid when device or counter
set names repeat or a device consumes an unknown counter set or counter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

from draplane.api.nodeselector import NodeSelector
from draplane.api.quantity import parse_quantity
from draplane.api.types import (
    Device,
    NodeSelector as NodeSelectorObj,
    ResourceSlice,
    ResourceSliceSpec,
)
from draplane.dra.structured.state import AllocationError, DeviceID, Features

Obj = Mapping[str, Any]


@dataclass
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice] = field(default_factory=list)  # targeting the node, by name
    slices_not_targeting: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)
    has_binding_conditions: bool = False
    candidates: list[Candidate] = field(default_factory=list)
    """Search candidates of this pool, built once (`pool_candidates`)."""
    free: tuple[frozenset[str], int] | None = None
    """(the pool's allocated names, `DeviceSet.names`; its devices outside them):
    `freedevices.free_devices`' cache, valid while the same names object is current."""
    multi_allocatable: bool = False
    """Some device allows multiple allocations (set with the candidates)."""

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


class Candidate:
    """One device of a gathered pool, in search order."""

    __slots__ = ("device", "driver", "id", "independent", "pool", "slice")

    def __init__(self, did: DeviceID, device: Device, slice_: ResourceSlice, pool: Pool) -> None:
        self.id = did
        self.driver = did[0]
        self.device = device
        self.slice = slice_
        self.pool = pool
        self.independent = not (
            device.get("consumesCounters") or device.get("allowMultipleAllocations")
        )
        """Whether the device can be picked or not regardless of the other picks."""


_selector_cache: dict[int, tuple[NodeSelectorObj, NodeSelector]] = {}


def parse_node_selector(sel: NodeSelectorObj) -> NodeSelector:
    hit = _selector_cache.get(id(sel))
    if hit is not None and hit[0] is sel:
        return hit[1]
    try:
        parsed = NodeSelector.parse(cast(dict[str, Any], sel.copy()))
    except ValueError as e:
        raise AllocationError(f"failed to parse node selector: {e}") from None
    if len(_selector_cache) > 10_000:
        _selector_cache.clear()
    _selector_cache[id(sel)] = (sel, parsed)
    return parsed


def node_matches(
    node: Obj, node_name: str | None, all_nodes: bool, selector: NodeSelectorObj | None
) -> bool:
    if node_name:
        return bool(node_name == (node.get("metadata") or {}).get("name"))
    if all_nodes:
        return True
    if selector is not None:
        return parse_node_selector(selector).matches(dict(node))
    return False


def slice_targets_node(spec: ResourceSliceSpec, node: Obj) -> bool:
    if spec.get("perDeviceNodeSelection"):
        return any(
            node_matches(node, d.get("nodeName"), bool(d.get("allNodes")), d.get("nodeSelector"))
            for d in spec.get("devices") or []
        )
    return node_matches(
        node, spec.get("nodeName"), bool(spec.get("allNodes")), spec.get("nodeSelector")
    )


class SliceIndex:
    """All ResourceSlices of the cluster, indexed for per-node pool gathering.

    Build one whenever the set of slices changes and share it between pods: it caches each
    node's pools and candidate devices by node object (a node update is a new object), and
    beside them the node's fit memo (`fit_memo`), which the allocator fills and reads.
    """

    def __init__(self, slices: Iterable[ResourceSlice | Obj]) -> None:
        self.all_slices = cast(list[ResourceSlice], list(slices))
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []  # no nodeName: selectors, allNodes, per-device, ...
        # (driver, pool) -> {generation: slice count}; the newest generation anywhere
        self.generations: dict[tuple[str, str], dict[int, int]] = {}
        self.pool_slices: dict[tuple[str, str], list[ResourceSlice]] = {}
        self._gathered: dict[tuple[int, int], Gathered] = {}
        self.fit_hits = 0
        """How often `Allocator.find` answered from a node's fit memo (tests, benches)."""
        for s in self.all_slices:
            spec = s.get("spec") or {}
            node_name = spec.get("nodeName")
            (self.by_node.setdefault(node_name, []) if node_name else self.shared).append(s)
            pool = spec.get("pool") or {}
            key = (spec.get("driver", ""), pool.get("name", ""))
            gens = self.generations.setdefault(key, {})
            gen = int(pool.get("generation", 0))
            gens[gen] = gens.get(gen, 0) + 1
            self.pool_slices.setdefault(key, []).append(s)

    def gather(self, node: Obj, features: Features) -> list[Pool]:
        """The node's pools; cached per node object (pools are read-only once gathered)."""
        return self.gather_with_candidates(node, features)[0]

    def gather_with_candidates(
        self, node: Obj, features: Features
    ) -> tuple[list[Pool], list[Candidate]]:
        """The node's pools and the devices of its usable pools in search order."""
        g = self.gathered(node, features)
        return g.pools, g.candidates

    def gathered(self, node: Obj, features: Features) -> Gathered:
        """The node's pools, candidates and fit memo, gathered once per node object."""
        key = (id(node), id(features))
        hit = self._gathered.get(key)
        if hit is not None and hit.node is node and hit.features is features:
            return hit
        pools = self._gather(node, features)
        candidates = [
            c for p in pools if not p.incomplete and not p.invalid for c in pool_candidates(p)
        ]
        if len(self._gathered) > 20_000:
            self._gathered.clear()
        self._gathered[key] = hit = Gathered(node, features, pools, candidates)
        return hit

    def _gather(self, node: Obj, features: Features) -> list[Pool]:
        node_name = (node.get("metadata") or {}).get("name", "")
        pools: dict[tuple[str, str], Pool] = {}
        here: list[ResourceSlice] = [*self.by_node.get(node_name, ()), *self.shared]
        for s in here:
            spec = s.get("spec") or {}
            if not spec.get("sharedCounters") and not slice_targets_node(spec, node):
                continue
            pool = spec.get("pool") or {}
            key = (spec.get("driver", ""), pool.get("name", ""))
            gen = int(pool.get("generation", 0))
            current = pools.get(key)
            if current is None or gen > current.generation:
                current = pools[key] = Pool(key[0], key[1], gen)
            elif gen < current.generation:
                continue
            current.slices.append(s)
        result: list[Pool] = []
        for key, p in pools.items():
            gens = self.generations[key]
            wanted = _slice_count(p.slices[0])
            if len(p.slices) != wanted:
                if max(gens) > p.generation:
                    continue  # a newer generation exists elsewhere: this one is obsolete
                p.incomplete = gens.get(p.generation, 0) != wanted
            targeting = {id(s) for s in p.slices}
            p.slices_not_targeting = [
                s
                for s in self.pool_slices[key]
                if id(s) not in targeting
                and int(((s.get("spec") or {}).get("pool") or {}).get("generation", 0))
                == p.generation
            ]
            _validate(p, features)
            p.slices = [s for s in p.slices if (s.get("spec") or {}).get("devices")]
            p.slices.sort(key=lambda s: (s.get("metadata") or {}).get("name", ""))
            result.append(p)
        result.sort(key=lambda p: (p.has_binding_conditions, p.driver, p.name))
        return result


class Gathered:
    """One node's gathered pools and candidates, and its fit memo: request signature ->
    (the pools' allocated device names, the picked candidates or None for "does not fit", the
    search steps that answer took). The allocator owns the memo's meaning (`Allocator.find`)."""

    __slots__ = ("candidates", "features", "fit_memo", "node", "pool_keys", "pools")

    def __init__(
        self, node: Obj, features: Features, pools: list[Pool], candidates: list[Candidate]
    ) -> None:
        self.node = node
        self.features = features
        self.pools = pools
        self.candidates = candidates
        self.pool_keys = [(p.driver, p.name) for p in pools]
        self.fit_memo: dict[
            Any, tuple[tuple[frozenset[str], ...], list[Candidate] | None, int]
        ] = {}


def _slice_count(s: ResourceSlice) -> int:
    return int(((s.get("spec") or {}).get("pool") or {}).get("resourceSliceCount", 1))


def _validate(p: Pool, features: Features) -> None:
    names: set[str] = set()
    consumers: list[Device] = []
    for s in [*p.slices, *p.slices_not_targeting]:
        spec = s.get("spec") or {}
        for cs in spec.get("sharedCounters") or []:
            if cs.get("name") in p.counter_sets and features.partitionable_devices:
                p.invalid, p.invalid_reason = True, f"duplicate counter set name {cs.get('name')}"
            p.counter_sets[cs.get("name", "")] = {
                n: parse_quantity(str((c or {}).get("value", "0")))
                for n, c in (cs.get("counters") or {}).items()
            }
        for d in spec.get("devices") or []:
            if d.get("name") in names:
                p.invalid, p.invalid_reason = True, f"duplicate device name {d.get('name')}"
            names.add(d.get("name", ""))
            if d.get("consumesCounters"):
                consumers.append(d)
            if d.get("bindingConditions"):
                p.has_binding_conditions = True
    if not features.partitionable_devices:
        return
    for d in consumers:
        for use in d.get("consumesCounters") or []:
            counters = p.counter_sets.get(use.get("counterSet", ""))
            if counters is None:
                p.invalid = True
                p.invalid_reason = f"device {d.get('name')} uses unknown counter set"
                continue
            for n in use.get("counters") or {}:
                if n not in counters:
                    p.invalid = True
                    p.invalid_reason = f"device {d.get('name')} uses unknown counter {n}"


def pool_candidates(p: Pool) -> list[Candidate]:
    """The pool's devices in search order (slices by name, devices as listed), built once."""
    if not p.candidates and p.slices:
        p.candidates = [
            Candidate((p.driver, p.name, d.get("name", "")), d, s, p)
            for s in p.slices
            for d in (s.get("spec") or {}).get("devices") or ()
        ]
        p.multi_allocatable = any(c.device.get("allowMultipleAllocations") for c in p.candidates)
    return p.candidates
