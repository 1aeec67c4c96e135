"""`explain_pod`: read the cluster into a `Snapshot`, run the scheduler's filters for the pod,
explain every rejecting node (`reasons.py`), group nodes failing alike, and look for checked
fixes (`fixes.py`). The `Report` it returns is what `render.py` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from draplane import dra
from draplane.api import meta
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.explain.evaluate import evaluate
from draplane.explain.fix import Fix, FixInputs
from draplane.explain.fixes import find_fixes
from draplane.explain.reasons import DraContext, Reason, node_reasons, status_reasons
from draplane.explain.snapshot import Snapshot, read_snapshot


class Verdict(IntEnum):
    """The exit code of `draplane explain`."""

    SCHEDULABLE = 0
    """Bound to a node, or some node fits it now."""
    ERROR = 1
    UNSCHEDULABLE_WITH_FIX = 2
    UNSCHEDULABLE = 3
    """No checked fix was found."""


@dataclass
class NodeGroup:
    reasons: list[Reason]
    nodes: list[str] = field(default_factory=list)
    details: dict[int, str] = field(default_factory=dict)
    """Reason index -> the first node's detail."""

    def json(self) -> dict[str, Any]:
        return {
            "count": len(self.nodes),
            "nodes": self.nodes,
            "reasons": [x.json() for x in self.reasons],
        }


@dataclass
class Report:
    pod: str
    node_name: str = ""
    """Where the pod is bound ("" when it is not)."""
    node_count: int = 0
    feasible: list[str] = field(default_factory=list)
    pod_reasons: list[Reason] = field(default_factory=list)
    """Reasons that concern every node (PreFilter's rejection, claims not created)."""
    groups: list[NodeGroup] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        if self.node_name or self.feasible:
            return Verdict.SCHEDULABLE
        return Verdict.UNSCHEDULABLE_WITH_FIX if self.fixes else Verdict.UNSCHEDULABLE

    def json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "scheduled": bool(self.node_name),
            "nodeName": self.node_name,
            "schedulable": self.verdict is Verdict.SCHEDULABLE,
            "nodes": self.node_count,
            "feasibleNodes": self.feasible,
            "podReasons": [x.json() for x in self.pod_reasons],
            "nodeGroups": [g.json() for g in self.groups],
            "fixes": [f.json() for f in self.fixes],
            "exitCode": int(self.verdict),
        }


def group_nodes(per_node: dict[str, list[Reason]]) -> list[NodeGroup]:
    """Nodes with the same reasons (same summaries) in one group, largest group first."""
    groups: dict[tuple[Any, ...], NodeGroup] = {}
    for node in sorted(per_node):
        reasons = per_node[node]
        key = tuple(x.group_key for x in reasons)
        group = groups.get(key)
        if group is None:
            group = groups[key] = NodeGroup(reasons)
        group.nodes.append(node)
    return sorted(groups.values(), key=lambda g: (-len(g.nodes), g.nodes[0]))


def _pending_claims(snapshot: Snapshot, pod: Obj) -> tuple[list[Obj], list[Reason]]:
    claims: list[Obj] = []
    missing: list[Reason] = []
    for pod_claim, name, claim in snapshot.pod_claims(pod):
        if claim is None:
            what = f"ResourceClaim {name} not found" if name else "ResourceClaim not created yet"
            missing.append(Reason("ClaimMissing", f"pod claim {pod_claim}: {what}"))
        elif not dra.is_allocated(claim):
            claims.append(claim)
    return claims, missing


def explain_snapshot(client: Client, snapshot: Snapshot, pod: Obj, *, fixes: bool = True) -> Report:
    report = Report(pod=meta.namespaced_key(pod), node_count=len(snapshot.nodes))
    report.node_name = meta.node_name(pod)
    if report.node_name:
        return report
    result = evaluate(client, snapshot, pod)
    report.feasible = result.feasible
    claims, missing = _pending_claims(snapshot, pod)
    report.pod_reasons += missing
    per_node: dict[str, list[Reason]] = {}
    if not result.pre_filter.is_success:
        if not missing:
            report.pod_reasons += status_reasons(result.pre_filter)
    else:
        ctx = DraContext(snapshot, claims) if claims else None
        nodes = {meta.name(n): n for n in snapshot.nodes}
        for name, statuses in result.failures.items():
            per_node[name] = node_reasons(ctx, nodes[name], statuses)
        report.groups = group_nodes(per_node)
    if fixes and report.verdict is not Verdict.SCHEDULABLE and per_node:
        report.fixes = find_fixes(FixInputs(client, snapshot, pod, claims, per_node))
    return report


async def explain_pod(client: Client, namespace: str, name: str, *, fixes: bool = True) -> Report:
    """Explain pod `namespace/name` from the state the API server has now (read-only)."""
    pod = await client.get(PODS, name, namespace)
    snapshot = await read_snapshot(client)
    snapshot = snapshot.changed(put=[(PODS, pod)])
    return explain_snapshot(client, snapshot, pod, fixes=fixes)
