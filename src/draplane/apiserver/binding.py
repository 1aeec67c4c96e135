"""The `pods/binding` subresource: assign a pod to a node once, as the scheduler's binder does."""

from __future__ import annotations

from collections.abc import Callable

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj

BINDING_SUCCESS: Obj = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Success",
    "code": 201,
}


def binding_mutation(binding: Obj, name: str, now: str) -> tuple[str, Callable[[Obj], Obj]]:
    """(pod name, function turning the stored pod into the bound pod). Rejects a binding
    without target (422), a pod being deleted or already assigned (409)."""
    target = (binding.get("target") or {}) if isinstance(binding, dict) else {}
    node = target.get("name")
    if not node:
        raise errors.invalid_object("Binding", name, [errors.required("target.name")])
    bind_name = str((binding.get("metadata") or {}).get("name") or name)
    annotations = (binding.get("metadata") or {}).get("annotations")

    def mutate(pod: Obj) -> Obj:
        if meta.deletion_timestamp(pod):
            raise errors.conflict(
                kinds.PODS, bind_name, "pod is being deleted, cannot be assigned to a host"
            )
        assigned = (pod.get("spec") or {}).get("nodeName")
        if assigned:
            raise errors.conflict(
                kinds.PODS, bind_name, f'pod {bind_name} is already assigned to node "{assigned}"'
            )
        new = meta.deep_copy(pod)
        new["spec"]["nodeName"] = node
        if annotations:
            new["metadata"].setdefault("annotations", {}).update(annotations)
        set_condition(new, "PodScheduled", "True", now)
        return new

    return bind_name, mutate


def set_condition(pod: Obj, type_: str, status: str, now: str) -> None:
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    for cond in conditions:
        if cond.get("type") == type_:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now
            cond["status"] = status
            cond.pop("reason", None)
            cond.pop("message", None)
            return
    conditions.append(
        {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": now}
    )
