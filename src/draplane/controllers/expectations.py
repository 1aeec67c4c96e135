"""`Expectations`: creates and deletes a controller issued and has not yet seen in its informer
(ControllerExpectations of pkg/controller/controller_utils.go).

A controller skips creating or deleting for an owner until the watch confirmed what it asked
for, so that a stale cache never makes it act twice; a record older than 5 minutes counts as
satisfied, and a failed call is confirmed at once by its caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from draplane.clock import REAL_CLOCK, Clock

EXPECTATIONS_TTL = 300.0


@dataclass
class _Record:
    adds: int = 0
    deletes: set[str] = field(default_factory=set)
    stamp: float = 0.0


class Expectations:
    def __init__(self, *, clock: Clock = REAL_CLOCK) -> None:
        self._clock = clock
        self._records: dict[str, _Record] = {}

    def _record(self, owner: str) -> _Record:
        record = self._records.setdefault(owner, _Record())
        record.stamp = self._clock.monotonic()
        return record

    def expect_creations(self, owner: str, count: int) -> None:
        self._record(owner).adds += count

    def creation_observed(self, owner: str) -> None:
        record = self._records.get(owner)
        if record is not None and record.adds > 0:
            record.adds -= 1

    def expect_deletions(self, owner: str, keys: list[str]) -> None:
        self._record(owner).deletes.update(keys)

    def deletion_observed(self, owner: str, key: str) -> None:
        record = self._records.get(owner)
        if record is not None:
            record.deletes.discard(key)

    def satisfied(self, owner: str) -> bool:
        record = self._records.get(owner)
        if record is None or (record.adds <= 0 and not record.deletes):
            return True
        return self._clock.monotonic() - record.stamp > EXPECTATIONS_TTL

    def forget(self, owner: str) -> None:
        self._records.pop(owner, None)
