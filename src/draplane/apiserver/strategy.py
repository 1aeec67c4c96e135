"""Per-kind rules the registry applies around create and update (Kubernetes' REST strategies).

What a create keeps of `status`, what main-resource and `status` updates may change, when
`metadata.generation` moves, and the delete grace period of pods.
"""

from __future__ import annotations

from typing import Any

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj

# Kinds with a status subresource: the main resource ignores status, `status` changes only it.
STATUS_SUBRESOURCE = frozenset(rt.key for rt in kinds.SERVED if "status" in rt.subresources)

# Metadata fields a write may not change (set by the server).
_SERVER_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "resourceVersion",
    "selfLink",
)

# Metadata a status write keeps from the stored object (ResetObjectMetaForStatus).
_STATUS_KEEPS_META = ("labels", "annotations", "finalizers", "ownerReferences")


def has_status_subresource(rt: ResourceType) -> bool:
    return rt.key in STATUS_SUBRESOURCE


def prepare_for_create(rt: ResourceType, obj: Obj) -> None:
    """Drop or initialise status as Kubernetes does on create."""
    if rt is kinds.PODS:
        status = obj.get("status") or {}
        obj["status"] = {"phase": "Pending", "qosClass": status.get("qosClass", "BestEffort")}
    elif rt is kinds.NAMESPACES:
        obj["status"] = {"phase": "Active"}
    elif rt in (kinds.RESOURCE_CLAIMS, kinds.POD_SCHEDULING_CONTEXTS):
        obj.pop("status", None)


def merge_main_update(rt: ResourceType, new: Obj, old: Obj) -> Obj:
    """A main-resource update: server metadata from `old`, status from `old`."""
    md = new.setdefault("metadata", {})
    old_md = old.get("metadata") or {}
    for field in _SERVER_META:
        if field in old_md:
            md[field] = old_md[field]
        else:
            md.pop(field, None)
    if has_status_subresource(rt):
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    if _spec_changed(rt, new, old):
        md["generation"] = int(old_md.get("generation") or 1) + 1
    return new


def merge_status_update(new: Obj, old: Obj) -> Obj:
    """A `status` update: everything but status (and a few metadata fields) from `old`."""
    result: Obj = {k: v for k, v in old.items() if k != "status"}
    md = dict(old.get("metadata") or {})
    new_md = new.get("metadata") or {}
    for field, value in new_md.items():
        if (
            field not in _STATUS_KEEPS_META
            and field not in _SERVER_META
            and field not in ("name", "namespace")
        ):
            md[field] = value
    result["metadata"] = md
    if "status" in new:
        result["status"] = new["status"]
    return result


def _spec_changed(rt: ResourceType, new: Obj, old: Obj) -> bool:
    ignored = {"metadata", "status", "kind", "apiVersion"}
    if not has_status_subresource(rt) and rt is not kinds.NAMESPACES:
        ignored.discard("status")
    keys = (set(new) | set(old)) - ignored
    return any(new.get(k) != old.get(k) for k in keys)


def same_content(new: Obj, old: Obj) -> bool:
    """True when an update would store exactly what is there (no write, no event)."""
    new_md: dict[str, Any] = dict(new.get("metadata") or {})
    old_md: dict[str, Any] = dict(old.get("metadata") or {})
    new_md.pop("resourceVersion", None)
    old_md.pop("resourceVersion", None)
    if new_md != old_md:
        return False
    keys = (set(new) | set(old)) - {"metadata", "kind", "apiVersion"}
    return all(new.get(k) == old.get(k) for k in keys)


def pod_grace_period(pod: Obj, requested: int | None) -> int:
    """Delete grace period for a pod: 0 when unscheduled or finished, else requested/spec."""
    spec = pod.get("spec") or {}
    phase = (pod.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    if requested is not None:
        return max(0, requested)
    return int(spec.get("terminationGracePeriodSeconds", 30))
