"""Candidate fixes for an unschedulable pod, each checked by running the scheduler's filters
(`evaluate.evaluate`) on the snapshot with the fix's changes applied; only checked ones are
kept. Candidates, smallest first: tolerate a device or node taint, label a node for the pod's
nodeSelector, lower a request's count (or serve one firstAvailable subrequest with it), drop a
claim constraint or selector, release a claim holding the devices (delete the pods it is
reserved for, and the claim), add a node like an existing one (its Node and ResourceSlices).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from draplane.api import meta
from draplane.api.kinds import NODES, PODS, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.api.meta import Obj, deep_copy
from draplane.api.tolerations import find_untolerated, pod_tolerations
from draplane.client.interface import Client
from draplane.explain import reasons as r
from draplane.explain.changes import Change, apply_to_snapshot, creatable, replace_claim
from draplane.explain.evaluate import evaluate
from draplane.explain.reasons import Reason
from draplane.explain.snapshot import Snapshot
from draplane.scheduler.plugins import names

MAX_FIXES = 5
MAX_CANDIDATES = 40
NODES_PER_GROUP = 3
"""Nodes of one group of nodes failing alike that candidates are drawn from."""


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
    prefer: dict[int, tuple[str, ...]] = field(default_factory=dict)


def _claim(inputs: FixInputs, key: str) -> Obj | None:
    return next((c for c in inputs.claims if meta.namespaced_key(c) == key), None)


def _request_spec(spec: Obj, request: str) -> Obj | None:
    """The `exactly` or firstAvailable entry of `request` ("name" or "name/sub") in `spec`."""
    name, _, sub = request.partition("/")
    for entry in spec["devices"].get("requests") or ():
        if entry.get("name") != name:
            continue
        if not sub:
            exact: Obj | None = entry.get("exactly")
            return exact
        for s in entry.get("firstAvailable") or ():
            if s.get("name") == sub:
                found: Obj = s
                return found
    return None


def _claim_edit(
    inputs: FixInputs, reason: Reason, edit: Any, summary: str, cost: int
) -> Fix | None:
    claim = _claim(inputs, reason.claim)
    if claim is None:
        return None
    spec = deep_copy(claim["spec"])
    target = _request_spec(spec, reason.request)
    if target is None or edit(spec, target) is False:
        return None
    return Fix(summary, replace_claim(claim, spec), cost)


def _toleration(taint_text: str) -> Obj:
    key_value, _, effect = taint_text.rpartition(":")
    key, sep, value = key_value.partition("=")
    if sep:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def _dra_candidates(inputs: FixInputs, reason: Reason, node: str) -> Iterator[Fix]:
    where = f"claim {reason.claim} request {reason.request}"
    if reason.code == r.DEVICE_TAINT:
        tol = _toleration(str(reason.data["taint"]))

        def tolerate(_spec: Obj, req: Obj) -> None:
            req.setdefault("tolerations", []).append(tol)

        fix = _claim_edit(
            inputs, reason, tolerate, f"tolerate device taint {reason.data['taint']} in {where}", 1
        )
        if fix:
            yield fix
    elif reason.code == r.NOT_ENOUGH_DEVICES:
        free = int(reason.data.get("free", 0))
        if free >= 1:

            def lower(_spec: Obj, req: Obj) -> bool:
                if (req.get("allocationMode") or "ExactCount") != "ExactCount":
                    return False
                req["count"] = free
                return True

            parent, sub, name = reason.request.partition("/")
            text = (
                f"use firstAvailable subrequest {name} of claim {reason.claim} with count {free}"
                if sub
                else f"lower the count of {where} to {free}"
            )
            fix = _claim_edit(inputs, reason, lower, text, 2)
            if fix and sub:
                _only_subrequest(fix, parent, name)
            if fix:
                yield fix
        yield from _release(inputs, reason, node)
    elif reason.code in (r.COUNTERS_EXHAUSTED, r.CAPACITY_EXHAUSTED):
        yield from _release(inputs, reason, node)
    elif reason.code in (r.SELECTOR_FALSE, r.CEL_RUNTIME_ERROR) and reason.summary.startswith(
        "claim "
    ):
        expr = str(reason.data.get("expression") or "")

        def drop(_spec: Obj, req: Obj) -> bool:
            before = list(req.get("selectors") or ())
            kept = [s for s in before if (s.get("cel") or {}).get("expression") != expr]
            if len(kept) == len(before):
                return False
            if kept:
                req["selectors"] = kept
            else:
                req.pop("selectors", None)
            return True

        fix = _claim_edit(inputs, reason, drop, f"drop selector `{expr}` of {where}", 2)
        if fix:
            yield fix
    elif reason.code == r.CONSTRAINT:
        claim = _claim(inputs, reason.claim)
        if claim is not None:
            spec = deep_copy(claim["spec"])
            del spec["devices"]["constraints"][int(reason.data["constraint"])]
            if not spec["devices"]["constraints"]:
                del spec["devices"]["constraints"]
            yield Fix(f"drop the {reason.summary.split(' cannot')[0]} of claim {reason.claim}",
                      replace_claim(claim, spec), 2)  # fmt: skip


def _only_subrequest(fix: Fix, parent: str, sub: str) -> None:
    """Move the chosen subrequest first (the allocator tries firstAvailable in order)."""
    body = fix.changes[-1].body
    assert body is not None
    for entry in body["spec"]["devices"].get("requests") or ():
        if entry.get("name") == parent:
            subs = entry["firstAvailable"]
            entry["firstAvailable"] = [s for s in subs if s.get("name") == sub] + [
                s for s in subs if s.get("name") != sub
            ]


def _release(inputs: FixInputs, reason: Reason, node: str) -> Iterator[Fix]:
    """Release each claim holding devices of the node's pools the request could use."""
    held = reason.data.get("heldBy") or _holders_on_node(inputs, node)
    for key in held:
        ns, _, name = str(key).partition("/")
        claim = inputs.snapshot.get(RESOURCE_CLAIMS_V1, name, ns)
        if claim is None:
            continue
        changes: list[Change] = []
        owner_pod = False
        for ref in (claim.get("status") or {}).get("reservedFor") or ():
            if ref.get("resource") == "pods":
                changes.append(Change("delete", PODS, str(ref.get("name")), ns))
                owner_pod = owner_pod or any(
                    o.get("uid") == ref.get("uid")
                    for o in meta.metadata(claim).get("ownerReferences") or ()
                )
        if not owner_pod:
            changes.append(Change("delete", RESOURCE_CLAIMS_V1, name, ns))
        pods = [c.name for c in changes if c.resource is PODS]
        via = f" (delete pod {', '.join(pods)} that uses it)" if pods else ""
        yield Fix(f"release claim {key}{via}", changes, 3)


def _holders_on_node(inputs: FixInputs, node: str) -> list[str]:
    """Claims allocated devices of ResourceSlices published for `node`."""
    pools = {
        (str(s["spec"].get("driver")), str((s["spec"].get("pool") or {}).get("name")))
        for s in inputs.snapshot.kind(RESOURCE_SLICES).values()
        if (s.get("spec") or {}).get("nodeName") == node
    }
    out: set[str] = set()
    for (driver, pool, _), claims in inputs.snapshot.claim_holders().items():
        if (driver, pool) in pools:
            out.update(meta.namespaced_key(c) for c in claims)
    return sorted(out)


def _node_candidates(inputs: FixInputs, reason: Reason, node: str) -> Iterator[Fix]:
    obj = inputs.snapshot.get(NODES, node)
    if obj is None:
        return
    if reason.plugin == names.TAINT_TOLERATION:
        taint = find_untolerated(
            (obj.get("spec") or {}).get("taints") or (), pod_tolerations(inputs.pod),
            ("NoSchedule", "NoExecute"),
        )  # fmt: skip
        if taint is not None:
            tol = {k: taint[k] for k in ("key", "value", "effect") if taint.get(k)}
            tol["operator"] = "Equal" if taint.get("value") else "Exists"
            tolerations = [*pod_tolerations(inputs.pod), tol]
            name, ns = meta.name(inputs.pod), meta.namespace(inputs.pod)
            yield Fix(f"tolerate node taint {taint.get('key')}:{taint.get('effect')} in pod "
                      f"{ns}/{name}",
                      [Change("patch", PODS, name, ns, {"spec": {"tolerations": tolerations}})],
                      1)  # fmt: skip
    elif reason.plugin == names.NODE_AFFINITY:
        wanted = (inputs.pod.get("spec") or {}).get("nodeSelector") or {}
        labels = meta.metadata(obj).get("labels") or {}
        missing = {k: v for k, v in wanted.items() if labels.get(k) != v}
        if missing:
            yield Fix(f"label node {node} {', '.join(f'{k}={v}' for k, v in missing.items())}",
                      [Change("patch", NODES, node, "", {"metadata": {"labels": missing}})],
                      1)  # fmt: skip


def node_like(inputs: FixInputs, node: str) -> Fix | None:
    """A new node copied from `node`: its Node and its node-local ResourceSlices."""
    obj = inputs.snapshot.get(NODES, node)
    if obj is None:
        return None
    existing = {name for _, name in inputs.snapshot.kind(NODES)}
    n = 2
    while f"{node}-{n}" in existing:
        n += 1
    new_name = f"{node}-{n}"
    new = creatable(obj)
    new["metadata"]["name"] = new_name
    new.get("spec", {}).pop("unschedulable", None)
    labels = new["metadata"].get("labels") or {}
    if labels.get("kubernetes.io/hostname") == node:
        labels["kubernetes.io/hostname"] = new_name
    new["status"] = {k: deep_copy(v) for k, v in (obj.get("status") or {}).items()
                     if k in ("capacity", "allocatable")}  # fmt: skip
    changes = [Change("create", NODES, new_name, "", new)]
    for s in inputs.snapshot.kind(RESOURCE_SLICES).values():
        spec = s.get("spec") or {}
        if spec.get("nodeName") != node:
            continue
        copy = creatable(s)
        copy["metadata"].pop("ownerReferences", None)
        copy["metadata"]["name"] = meta.name(s).replace(node, new_name, 1)
        if copy["metadata"]["name"] == meta.name(s):
            copy["metadata"]["name"] = f"{new_name}-{meta.name(s)}"
        copy["spec"]["nodeName"] = new_name
        pool = copy["spec"]["pool"]
        pool["name"] = str(pool.get("name", "")).replace(node, new_name, 1) or new_name
        if pool["name"] == (spec.get("pool") or {}).get("name"):
            pool["name"] = f"{pool['name']}-{new_name}"
        changes.append(Change("create", RESOURCE_SLICES, copy["metadata"]["name"], "", copy))
    return Fix(f"add a node like {node} ({new_name}, with its ResourceSlices)", changes, 4)


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
                _dra_candidates(inputs, reason, node)
                if reason.plugin == names.DYNAMIC_RESOURCES
                else _node_candidates(inputs, reason, node)
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
