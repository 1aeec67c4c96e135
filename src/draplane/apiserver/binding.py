"""The `pods/binding` subresource: assign a pod to a node once, as the scheduler's binder does."""

from __future__ import annotations

from collections.abc import Callable

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import as_dict, as_str, validate_annotations

BINDING_SUCCESS: Obj = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Success",
    "code": 201,
}


def binding_mutation(binding: Obj, name: str, now: str) -> tuple[str, Callable[[Obj], Obj]]:
    """(pod name, function turning the stored pod into the bound pod). Rejects a binding whose
    target or annotations have the wrong shape or no target name (422), a pod being deleted or
    already assigned (409)."""
    causes: list[errors.FieldError] = []
    if not isinstance(binding, dict):
        binding = {}
    md = as_dict(binding.get("metadata"), "metadata", causes)
    target = as_dict(binding.get("target"), "target", causes)
    node = as_str(target.get("name"), "target.name", causes)
    if not node and not causes:
        causes.append(errors.required("target.name"))
    annotations = md.get("annotations")
    if annotations is not None:
        causes.extend(validate_annotations(annotations, "metadata.annotations"))
    given = md.get("name")
    bind_name = given if isinstance(given, str) and given else name
    if causes:
        raise errors.invalid_object("Binding", bind_name, causes)

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
    if not isinstance(pod.get("status"), dict):
        pod["status"] = {}
    conditions = pod["status"].get("conditions")
    if not isinstance(conditions, list):
        conditions = pod["status"]["conditions"] = []
    for cond in conditions:
        if isinstance(cond, dict) and cond.get("type") == type_:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now
            cond["status"] = status
            cond.pop("reason", None)
            cond.pop("message", None)
            return
    conditions.append(
        {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": now}
    )
