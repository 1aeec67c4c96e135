"""The example driver's allocation model (that of kubernetes/kubernetes
test/e2e/dra/test-driver): pure state, no I/O.

Devices are named `dev-<i>`: per node when node-local (`devices_per_node`, 0 = unlimited), or
from one cluster-wide pool (`network_attached`). A claim UID maps to one `Grant`; allocating a
known UID again returns the same grant (idempotency), and only real changes count.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NETWORK = ""
"""Grant.node of a network-attached device."""


@dataclass(frozen=True)
class Resources:
    """What the driver offers. `network_attached > 0` switches to the cluster-wide pool."""

    devices_per_node: int = 8
    network_attached: int = 0
    shareable: bool = False
    nodes: tuple[str, ...] = ()
    """Nodes the driver runs on; empty means every node."""

    @property
    def node_local(self) -> bool:
        return self.network_attached <= 0

    @property
    def max_allocations(self) -> int:
        """0 means unlimited."""
        return self.devices_per_node if self.node_local else self.network_attached


@dataclass(frozen=True)
class Grant:
    node: str
    devices: tuple[str, ...]


class AllocationError(Exception):
    """Resources exhausted; the message is the test driver's."""


@dataclass
class Allocator:
    resources: Resources
    rng: random.Random = field(default_factory=random.Random)
    grants: dict[str, Grant] = field(default_factory=dict)
    _used: dict[str, set[str]] = field(default_factory=dict)
    """Node ("" for the network pool) -> devices granted there; kept in step with `grants`."""
    allocations: int = 0
    """Real (non-idempotent) allocations so far."""
    deallocations: int = 0

    def allocate(self, claim_uid: str, *, selected_node: str | None, nodes: list[str]) -> Grant:
        """Allocate for `selected_node`, or (None) on any of `nodes` for immediate allocation."""
        known = self.grants.get(claim_uid)
        if known is not None:
            return known
        if self.resources.node_local:
            node = self._pick_node(selected_node, nodes)
        else:
            if self._exhausted(self._count(NETWORK)):
                raise AllocationError("resources exhausted in the cluster")
            node = NETWORK
        grant = Grant(node=node, devices=(self._free_device(node),))
        self._add(claim_uid, grant)
        self.allocations += 1
        return grant

    def deallocate(self, claim_uid: str) -> None:
        grant = self.grants.pop(claim_uid, None)
        if grant is not None:
            self._used[grant.node].difference_update(grant.devices)
            self.deallocations += 1

    def restore(self, claim_uid: str, grant: Grant) -> None:
        """Record a grant found on an allocated claim (rebuilding state after a restart)."""
        if claim_uid not in self.grants:
            self._add(claim_uid, grant)

    def _add(self, claim_uid: str, grant: Grant) -> None:
        self.grants[claim_uid] = grant
        self._used.setdefault(grant.node, set()).update(grant.devices)

    def unsuitable_nodes(self, *, potential_nodes: list[str], claim_count: int) -> list[str]:
        """Nodes that cannot take `claim_count` more claims (all of one pod, jointly)."""
        limit = self.resources.max_allocations
        if limit <= 0:
            return [n for n in potential_nodes if not self._runs_on(n)]
        # Called for every PodSchedulingContext sync with up to 128 nodes: kept to dict lookups.
        full = limit - claim_count
        runs_on = set(self.resources.nodes)
        if not self.resources.node_local:
            if self._count(NETWORK) > full:
                return list(potential_nodes)
            return [n for n in potential_nodes if runs_on and n not in runs_on]
        used = self._used
        return [
            node
            for node in potential_nodes
            if (runs_on and node not in runs_on) or len(used.get(node, ())) > full
        ]

    def _pick_node(self, selected_node: str | None, nodes: list[str]) -> str:
        if selected_node is None:
            candidates = [
                n for n in nodes if self._runs_on(n) and not self._exhausted(self._count(n))
            ]
            if not candidates:
                raise AllocationError("resources exhausted on all nodes")
            return self.rng.choice(sorted(candidates))
        if not self._runs_on(selected_node) or self._exhausted(self._count(selected_node)):
            raise AllocationError(f'resources exhausted on node "{selected_node}"')
        return selected_node

    def _runs_on(self, node: str) -> bool:
        return not self.resources.nodes or node in self.resources.nodes

    def _exhausted(self, count: int) -> bool:
        limit = self.resources.max_allocations
        return limit > 0 and count >= limit

    def _count(self, node: str) -> int:
        return len(self._used.get(node, ()))

    def _free_device(self, node: str) -> str:
        used = self._used.get(node, set())
        index = 0
        while f"dev-{index}" in used:
            index += 1
        return f"dev-{index}"
