"""The write audit: how many writes each (verb, resource) pair made and how they ended.

The benchmark reads it to report API writes per pod; `/metrics` exposes the same numbers as
`apiserver_audit_writes_total`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from draplane.api import errors


@dataclass
class Audit:
    writes: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(verb, resource[/subresource]) -> successful writes."""
    conflicts: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(verb, resource[/subresource]) -> writes rejected with 409 Conflict."""

    def record(self, verb: str, resource: str, *, conflict: bool = False) -> None:
        (self.conflicts if conflict else self.writes)[(verb, resource)] += 1

    @contextmanager
    def recording(self, verb: str, resource: str, subresource: str) -> Iterator[None]:
        """Count the write made inside the block, or its 409 Conflict."""
        key = f"{resource}/{subresource}" if subresource else resource
        try:
            yield
        except errors.StatusError as err:
            if errors.is_conflict(err):
                self.record(verb, key, conflict=True)
            raise
        self.record(verb, key)

    def snapshot(self) -> dict[str, int]:
        return {f"{verb} {resource}": n for (verb, resource), n in sorted(self.writes.items())}

    def reset(self) -> None:
        self.writes.clear()
        self.conflicts.clear()
