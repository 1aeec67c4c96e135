"""`draplane explain`: why a pod is not scheduled, and checked fixes, computed with the
scheduler's own filters and the structured allocator over a read-only snapshot of the cluster."""

from draplane.explain.changes import Change, apply_changes
from draplane.explain.fix import Fix
from draplane.explain.reasons import Reason
from draplane.explain.render import render
from draplane.explain.report import Report, Verdict, explain_pod, explain_snapshot
from draplane.explain.snapshot import Snapshot, read_snapshot

__all__ = [
    "Change",
    "Fix",
    "Reason",
    "Report",
    "Snapshot",
    "Verdict",
    "apply_changes",
    "explain_pod",
    "explain_snapshot",
    "read_snapshot",
    "render",
]
