"""Candidate fixes for DynamicResources reasons: tolerate a device taint, lower a request's
count (or use a firstAvailable subrequest with it), drop a failing claim selector or a
constraint (a changed claim is deleted and created again), release the claims holding the
devices (delete the pods they are reserved for, and the claims)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from draplane.api import meta
from draplane.api.kinds import PODS, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.api.meta import Obj, deep_copy
from draplane.explain import reasons as r
from draplane.explain.changes import Change, replace_claim
from draplane.explain.fix import Fix, FixInputs
from draplane.explain.reasons import Reason


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


def dra_candidates(inputs: FixInputs, reason: Reason, node: str) -> Iterator[Fix]:
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
    """Release each claim holding devices of the node's pools the request could use, then as
    many of them together as the request is short of."""
    held = [str(k) for k in reason.data.get("heldBy") or _holders_on_node(inputs, node)]
    single = [(key, _release_changes(inputs, key)) for key in held]
    for key, changes in single:
        pods = [c.name for c in changes if c.resource is PODS]
        via = f" (delete pod {', '.join(pods)} that uses it)" if pods else ""
        yield Fix(f"release claim {key}{via}", changes, 3)
    short = int(reason.data.get("wanted", 0)) - int(reason.data.get("free", 0))
    if short > 1 and len(single) >= short:
        keys = [key for key, _ in single[:short]]
        changes = [c for _, group in single[:short] for c in group]
        yield Fix(f"release claims {', '.join(keys)}", changes, 3)


def _release_changes(inputs: FixInputs, key: str) -> list[Change]:
    """Delete the pods the claim is reserved for, then the claim (its finalizer holds it until
    the claim controller has deallocated it; one generated for a deleted pod would go anyway)."""
    ns, _, name = key.partition("/")
    claim = inputs.snapshot.get(RESOURCE_CLAIMS_V1, name, ns) or {}
    changes = [
        Change("delete", PODS, str(ref.get("name")), ns)
        for ref in (claim.get("status") or {}).get("reservedFor") or ()
        if ref.get("resource") == "pods"
    ]
    changes.append(Change("delete", RESOURCE_CLAIMS_V1, name, ns))
    return changes


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
