"""What the allocator's split-off steps read of it: `AllocationContext`, a Protocol.

`prepare`, `search`, `firstfit` and `freedevices` take this view (the feature switches, the
selector cache, the allocated state, the class lookup), never the `Allocator` that owns them, so
they import nothing of `allocator.py`; `Allocator` satisfies it as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from draplane.dra.cel import SelectorCache
from draplane.dra.structured.state import AllocatedState, Features


class AllocationContext(Protocol):
    features: Features
    cache: SelectorCache
    allocated: AllocatedState

    def get_class(self, name: str) -> Mapping[str, Any] | None:
        """The DeviceClass of that name, None when there is none."""
        ...
