"""Candidate fixes for an unschedulable pod, each checked by running the scheduler's filters
(`evaluate.evaluate`) on the snapshot with the fix's changes applied; only checked ones are
kept. Candidates, smallest first: tolerate a device or node taint, label a node for the pod's
nodeSelector, lower a request's count (or serve one firstAvailable subrequest with it), drop a
claim constraint or selector, release a claim holding the devices (delete the pods it is
reserved for, and the claim), add a node like an existing one (its Node and ResourceSlices).
"""

from __future__ import annotations

from draplane.api import meta
from draplane.api.kinds import NODES, PODS, RESOURCE_SLICES
from draplane.explain import reasons as r
from draplane.explain.changes import apply_to_snapshot
from draplane.explain.dra_fixes import dra_candidates
from draplane.explain.evaluate import evaluate
from draplane.explain.fix import Fix, FixInputs
from draplane.explain.node_fixes import node_candidates, node_like
from draplane.explain.reasons import Reason
from draplane.scheduler.plugins import names

MAX_FIXES = 5
MAX_CANDIDATES = 40
NODES_PER_GROUP = 3
"""Nodes of one group of nodes failing alike that candidates are drawn from."""


def candidates(inputs: FixInputs) -> list[Fix]:
    out: list[Fix] = []
    seen: set[str] = set()
    like: list[str] = []
    per_group: dict[tuple[object, ...], int] = {}
    for node, reasons in inputs.node_reasons.items():
        group = tuple(x.group_key for x in reasons)
        per_group[group] = per_group.get(group, 0) + 1
        if per_group[group] > NODES_PER_GROUP:
            continue
        for reason in reasons:
            gen = (
                dra_candidates(inputs, reason, node)
                if reason.plugin == names.DYNAMIC_RESOURCES
                else node_candidates(inputs, reason, node)
            )
            for fix in gen:
                if fix.summary not in seen:
                    seen.add(fix.summary)
                    fix.node = node
                    out.append(fix)
        if len(like) < 3 and _only_dra_or_resources(reasons):
            like.append(node)
    like += _nodes_with_missing_drivers(inputs, like)
    for node in like[:4]:
        copy = node_like(inputs, node)
        if copy is not None and copy.summary not in seen:
            seen.add(copy.summary)
            out.append(copy)
    out.sort(key=lambda f: f.cost)
    return out[:MAX_CANDIDATES]


def _only_dra_or_resources(reasons: list[Reason]) -> bool:
    plugins = {names.DYNAMIC_RESOURCES, names.NODE_RESOURCES_FIT}
    return all(x.plugin in plugins for x in reasons) and not any(
        x.code in (r.CEL_RUNTIME_ERROR, r.SELECTOR_FALSE) for x in reasons
    )


def _nodes_with_missing_drivers(inputs: FixInputs, taken: list[str]) -> list[str]:
    drivers = {
        d
        for reasons in inputs.node_reasons.values()
        for x in reasons
        if x.code == r.NO_SLICE_FOR_DRIVER
        for d in x.data.get("drivers") or ()
    }
    out: list[str] = []
    for s in inputs.snapshot.kind(RESOURCE_SLICES).values():
        spec = s.get("spec") or {}
        node = spec.get("nodeName")
        if node and spec.get("driver") in drivers and node not in taken and node not in out:
            out.append(str(node))
            drivers.discard(str(spec.get("driver")))
    return out


def verify(inputs: FixInputs, fix: Fix) -> bool:
    changed = apply_to_snapshot(inputs.snapshot, fix.changes)
    pod = changed.get(PODS, meta.name(inputs.pod), meta.namespace(inputs.pod)) or inputs.pod
    created = [c.name for c in fix.changes if c.resource is NODES and c.action == "create"]
    prefer = tuple(created) + ((fix.node,) if fix.node else ())
    result = evaluate(inputs.client, changed, pod, first_fit=True, prefer=prefer)
    if result.schedulable:
        fix.verified = True
        fix.node = result.feasible[0]
    return fix.verified


def find_fixes(inputs: FixInputs, *, limit: int = MAX_FIXES) -> list[Fix]:
    """The verified candidates, smallest first (at most `limit`)."""
    out: list[Fix] = []
    for fix in candidates(inputs):
        if verify(inputs, fix):
            out.append(fix)
            if len(out) >= limit:
                break
    return out
