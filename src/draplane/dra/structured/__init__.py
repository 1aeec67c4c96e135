"""The structured-parameters allocator (k8s.io/dynamic-resource-allocation/structured).

Pure functions over v1 object dicts: `Allocator(...).allocate(node, claims)` returns one
`status.allocation` dict per claim, None for "does not fit this node", or raises
`FailedAllocationOnNode` / `AllocationError`.
"""

from draplane.dra.structured.allocator import (
    ERR_CANNOT_ALLOCATE,
    ERR_INVALID_POOLS,
    Allocator,
    Answer,
    available_counters,
)
from draplane.dra.structured.pools import Pool, SliceIndex
from draplane.dra.structured.prepare import ALLOCATION_RESULTS_MAX_SIZE
from draplane.dra.structured.state import (
    AllocatedCounts,
    AllocatedState,
    AllocationError,
    DeviceID,
    FailedAllocationOnNode,
    Features,
)

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "ERR_CANNOT_ALLOCATE",
    "ERR_INVALID_POOLS",
    "AllocatedCounts",
    "AllocatedState",
    "AllocationError",
    "Allocator",
    "Answer",
    "DeviceID",
    "FailedAllocationOnNode",
    "Features",
    "Pool",
    "SliceIndex",
    "available_counters",
]
