"""What a classic-DRA driver implements: the `Driver` protocol and its `ClaimAllocation` items.

The framework (`DriverController`) does the Kubernetes part; a driver only answers these calls
(k8s.io/dynamic-resource-allocation/controller.Driver, v0.28.0). Parameters are opaque to the
framework: whatever `get_class_parameters` / `get_claim_parameters` return is handed back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from draplane.api.meta import Obj


@dataclass
class ClaimAllocation:
    """One claim in a batch: inputs filled by the framework, outputs by the driver.

    `allocate` sets either `allocation` (an AllocationResult dict: resourceHandles,
    availableOnNodes, shareable) or `error`; `unsuitable_nodes` fills `unsuitable_nodes`.
    """

    pod_claim_name: str
    claim: Obj
    resource_class: Obj
    claim_parameters: object
    class_parameters: object
    unsuitable_nodes: list[str] = field(default_factory=list)
    allocation: Obj | None = None
    error: str | None = None


class Driver(Protocol):
    """The driver-specific half of a DRA driver controller. Methods may raise on failure;
    the framework then retries with backoff and reports a Warning event `Failed`."""

    async def get_class_parameters(self, resource_class: Obj) -> object:
        """Read and validate the class's parametersRef (which may be absent)."""
        ...

    async def get_claim_parameters(
        self, claim: Obj, *, resource_class: Obj, class_parameters: object
    ) -> object:
        """Read and validate the claim's parametersRef (which may be absent)."""
        ...

    async def allocate(self, claims: list[ClaimAllocation], *, selected_node: str | None) -> None:
        """Allocate every item, setting its `allocation` or `error`.

        `selected_node` is None for immediate allocation; otherwise the result must be usable
        on that node or the item fails. Must be idempotent per claim UID (the framework may
        retry after a failed status write).
        """
        ...

    async def deallocate(self, claim: Obj) -> None:
        """Free what the claim holds; also aborts an allocation in flight. Idempotent."""
        ...

    async def unsuitable_nodes(
        self, pod: Obj, *, claims: list[ClaimAllocation], potential_nodes: list[str]
    ) -> None:
        """Set each item's `unsuitable_nodes` among `potential_nodes`.

        The pod needs all its claims on the same node, so drivers compute them jointly.
        """
        ...
