"""`Status`, the value every extension point returns, and its `Code` (Kubernetes 1.28 codes).

Expected outcomes are values, not exceptions: the runtime turns a plugin exception into an
ERROR status. The runtime, not the plugin, fills in `plugin`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Code(enum.IntEnum):
    SUCCESS = 0
    """Nil status in Kubernetes: the plugin is happy."""
    ERROR = 1
    """Internal or infrastructure failure; the pod is retried after backoff."""
    UNSCHEDULABLE = 2
    """The pod does not fit now; preemption might help. The pod waits for a relevant event."""
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    """The pod does not fit and preemption will not help. Waits for a relevant event."""
    WAIT = 4
    """Permit only: hold the pod in the waiting list until allowed or rejected."""
    SKIP = 5
    """PreFilter: skip this plugin's Filter; PreScore: skip its Score; Bind: try the next binder."""


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def error(cls, message: str) -> Status:
        return cls(Code.ERROR, (message,))

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        """UnschedulableAndUnresolvable."""
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)

    @classmethod
    def skip(cls) -> Status:
        return SKIP

    @classmethod
    def wait(cls, *reasons: str) -> Status:
        return cls(Code.WAIT, reasons)

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    @property
    def is_rejected(self) -> bool:
        """Unschedulable or UnschedulableAndUnresolvable."""
        return self.code is Code.UNSCHEDULABLE or self.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        # Direct construction: dataclasses.replace costs several times more, and Filter
        # calls this for every rejected node.
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}" if self.reasons else self.code.name


SUCCESS = Status()
SKIP = Status(Code.SKIP)
