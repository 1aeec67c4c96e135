"""The `scale` subresource of Deployments, ReplicaSets and StatefulSets: the autoscaling/v1
Scale of an object (pkg/registry/apps/*/storage `scaleFrom*`), and what a Scale write sets.

A Scale carries the parent's name, namespace, uid, resourceVersion and creationTimestamp,
`spec.replicas` (omitted when 0, as autoscaling/v1 encodes it), `status.replicas` and
`status.selector` as a label-selector string. A write validates the Scale (422 on kind Scale),
checks its resourceVersion (409) and sets only the parent's `spec.replicas`.
"""

from __future__ import annotations

from draplane.api import errors, kinds, meta
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.validation.podtemplate import format_selector, is_int, nonnegative

SCALE_API_VERSION = "autoscaling/v1"
SCALE_KIND = "Scale"
_SCALE_RT = ResourceType(kinds.AUTOSCALING_GROUP, "v1", "scales", SCALE_KIND, True, "scale")
"""Only to qualify the kind in Status messages (`Scale.autoscaling "x" is invalid`)."""


def scale_of(obj: Obj) -> Obj:
    md = obj.get("metadata") or {}
    spec: Obj = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    status: Obj = obj["status"] if isinstance(obj.get("status"), dict) else {}
    scale_md = {
        k: md[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if k in md
    }
    replicas = spec.get("replicas") if is_int(spec.get("replicas")) else 0
    current = status.get("replicas") if is_int(status.get("replicas")) else 0
    selector = spec.get("selector")
    text = format_selector(selector) if selector is not None else ""
    return {
        "kind": SCALE_KIND,
        "apiVersion": SCALE_API_VERSION,
        "metadata": scale_md,
        "spec": {"replicas": replicas} if replicas else {},
        "status": {"replicas": current, "selector": "" if text == "<none>" else text},
    }


def _validate(scale: Obj) -> list[FieldError]:
    spec = scale.get("spec")
    if spec is not None and not isinstance(spec, dict):
        return [errors.invalid("spec", spec, "must be an object")]
    replicas = (spec or {}).get("replicas")
    if replicas is not None and not is_int(replicas):
        return [errors.invalid("spec.replicas", replicas, "must be an integer")]
    return nonnegative(replicas, "spec.replicas")


def apply_scale(rt: ResourceType, old: Obj, scale: object) -> Obj:
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
    spec = new.get("spec")
    if not isinstance(spec, dict):
        spec = new["spec"] = {}
    spec["replicas"] = (scale.get("spec") or {}).get("replicas") or 0
    return new


def pinned(scale: object) -> bool:
    """The Scale sent names a resourceVersion (no retry on conflict)."""
    md = scale.get("metadata") if isinstance(scale, dict) else None
    return isinstance(md, dict) and bool(md.get("resourceVersion"))
