"""The `scale` subresource, one mechanism for every kind that serves it: the autoscaling/v1
Scale of an object and what a Scale write sets, at the paths the kind's strategy declares
(`ResourceStrategy.scale`: `.spec.replicas`, `.status.replicas` and the `.spec.selector`
LabelSelector for Deployments, ReplicaSets and StatefulSets, as pkg/registry/apps/*/storage
`scaleFrom*`, or label map for ReplicationControllers; a CRD's `specReplicasPath`,
`statusReplicasPath` and `labelSelectorPath` for custom resources, as apiextensions-apiserver's
scale storage).

A Scale carries the parent's name, namespace, uid, resourceVersion and creationTimestamp,
`spec.replicas` and `status.selector` (omitted when 0 or empty, as autoscaling/v1 encodes
them), and `status.replicas`. The selector is read as a label-selector string: a LabelSelector
object is formatted, a string (a CRD's serialized selector) is taken as it is. A write
validates the Scale (422 on kind Scale), checks its resourceVersion and uid (409) and sets
only the parent's desired replicas.
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors, kinds, meta
from draplane.api.crd import ScaleSubresource
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.validation.podtemplate import format_selector, is_int, nonnegative

SCALE_API_VERSION = "autoscaling/v1"
SCALE_KIND = "Scale"
_SCALE_RT = ResourceType(kinds.AUTOSCALING_GROUP, "v1", "scales", SCALE_KIND, True, "scale")
"""Only to qualify the kind in Status messages (`Scale.autoscaling "x" is invalid`)."""

REPLICAS = ScaleSubresource(".spec.replicas", ".status.replicas", ".spec.selector")
"""The paths of the built-in kinds that serve `scale`."""


def get_path(obj: Any, path: str) -> Any:
    """The value at a simple JSON path (`.spec.replicas`), None when absent."""
    for part in path.strip(".").split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    for part in parts[:-1]:
        child = obj.get(part)
        if not isinstance(child, dict):
            child = obj[part] = {}
        obj = child
    obj[parts[-1]] = value


def _selector(obj: Obj, path: str) -> str:
    value = get_path(obj, path) if path else None
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        # A set of labels (a ReplicationController's map selector), not a LabelSelector.
        return ",".join(f"{k}={v}" for k, v in sorted(value.items()))
    if isinstance(value, dict):
        text = format_selector(value)
        return "" if text == "<none>" else text
    return ""


def scale_of(obj: Obj, paths: ScaleSubresource = REPLICAS) -> Obj:
    md = obj.get("metadata") or {}
    scale_md = {
        k: md[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if k in md
    }
    replicas = get_path(obj, paths.spec_replicas_path)
    current = get_path(obj, paths.status_replicas_path)
    status: Obj = {"replicas": current if is_int(current) else 0}
    selector = _selector(obj, paths.label_selector_path)
    if selector:
        status["selector"] = selector
    return {
        "kind": SCALE_KIND,
        "apiVersion": SCALE_API_VERSION,
        "metadata": scale_md,
        "spec": {"replicas": replicas} if is_int(replicas) and replicas else {},
        "status": status,
    }


def _validate(scale: Obj) -> list[FieldError]:
    spec = scale.get("spec")
    if spec is not None and not isinstance(spec, dict):
        return [errors.invalid("spec", spec, "must be an object")]
    replicas = (spec or {}).get("replicas")
    if replicas is not None and not is_int(replicas):
        return [errors.invalid("spec.replicas", replicas, "must be an integer")]
    return nonnegative(replicas, "spec.replicas")


def apply_scale(
    rt: ResourceType, old: Obj, scale: object, paths: ScaleSubresource = REPLICAS
) -> Obj:
    """The parent object after writing `scale` over it (raises 400/409/422)."""
    if not isinstance(scale, dict):
        raise errors.bad_request("the request body must be an object")
    scale_md: Obj = scale["metadata"] if isinstance(scale.get("metadata"), dict) else {}
    name = meta.name(old)
    if scale_md.get("name") and scale_md["name"] != name:
        raise errors.bad_request(
            f"the name of the object ({scale_md['name']}) does not match the name on the URL "
            f"({name})"
        )
    causes = _validate(scale)
    if causes:
        raise errors.invalid_object(SCALE_KIND, name, causes, _SCALE_RT)
    rv = scale_md.get("resourceVersion")
    if rv and rv != meta.resource_version(old):
        raise errors.conflict(rt, name)
    uid = scale_md.get("uid")
    if uid and uid != meta.uid(old):
        raise errors.conflict(
            rt,
            name,
            f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.uid(old)}",
        )
    new = meta.deep_copy(old)
    set_path(new, paths.spec_replicas_path, (scale.get("spec") or {}).get("replicas") or 0)
    return new


def pinned(scale: object) -> bool:
    """The Scale sent names a resourceVersion (no retry on conflict)."""
    md = scale.get("metadata") if isinstance(scale, dict) else None
    return isinstance(md, dict) and bool(md.get("resourceVersion"))
