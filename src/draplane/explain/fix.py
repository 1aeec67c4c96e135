"""A candidate fix (`Fix`: what to change, whether it was checked, where the pod then fits)
and what candidates are drawn from (`FixInputs`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.explain.changes import Change
from draplane.explain.reasons import Reason
from draplane.explain.snapshot import Snapshot


@dataclass
class Fix:
    summary: str
    changes: list[Change]
    cost: int
    verified: bool = False
    node: str = ""
    """A node the pod fits on once the changes are made."""

    def json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "verified": self.verified,
            "node": self.node,
            "changes": [c.json() for c in self.changes],
        }


@dataclass
class FixInputs:
    client: Client
    snapshot: Snapshot
    pod: Obj
    claims: list[Obj]
    """The pod's claims still to allocate."""
    node_reasons: dict[str, list[Reason]]
