"""Candidate fixes for a node's non-DRA reasons (tolerate its taint in the pod, label it for
the pod's node selector) and the fix of last resort: add a node like an existing one (its Node
and its node-local ResourceSlices, nothing allocated)."""

from __future__ import annotations

from collections.abc import Iterator

from draplane.api import meta
from draplane.api.kinds import NODES, PODS, RESOURCE_SLICES
from draplane.api.meta import Obj, deep_copy
from draplane.api.tolerations import find_untolerated, pod_tolerations
from draplane.explain.changes import Change, creatable
from draplane.explain.fix import Fix, FixInputs
from draplane.explain.reasons import Reason
from draplane.scheduler.plugins import names


def node_candidates(inputs: FixInputs, reason: Reason, node: str) -> Iterator[Fix]:
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
        wanted = _wanted_labels(inputs.pod)
        labels = meta.metadata(obj).get("labels") or {}
        missing = {k: v for k, v in wanted.items() if labels.get(k) != v}
        if missing:
            yield Fix(f"label node {node} {', '.join(f'{k}={v}' for k, v in missing.items())}",
                      [Change("patch", NODES, node, "", {"metadata": {"labels": missing}})],
                      1)  # fmt: skip


def _wanted_labels(pod: Obj) -> dict[str, str]:
    """Labels that satisfy the pod's nodeSelector and the `In` requirements of the first term
    of its required node affinity (other operators have no single label to add)."""
    spec = pod.get("spec") or {}
    out = dict(spec.get("nodeSelector") or {})
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    for expr in (terms[0].get("matchExpressions") or []) if terms else ():
        if expr.get("operator") == "In" and expr.get("values"):
            out.setdefault(str(expr["key"]), str(expr["values"][0]))
    return out


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
