"""Rules every write applies before storage: kind and namespace checks, merging a write into
the stored object (main resource, `status`, namespace `finalize`)."""

from __future__ import annotations

from draplane.api import errors, kinds, meta, validation
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver import strategy


def check_type(rt: ResourceType, obj: Obj) -> None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if (api_version and api_version != rt.api_version) or (kind and kind != rt.kind):
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({rt.api_version})"
            if api_version != rt.api_version
            else f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
        )


def set_namespace(rt: ResourceType, namespace: str, md: Obj) -> None:
    if not rt.namespaced:
        md.pop("namespace", None)
        return
    given = md.get("namespace")
    if given and namespace and given != namespace:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    md["namespace"] = namespace or given or ""
    if not md["namespace"]:
        raise errors.bad_request("a namespace is required for namespaced resources")


def merge_for_write(
    rt: ResourceType, subresource: str, new: Obj, old: Obj, namespace: str, name: str
) -> Obj:
    """The object to store for a write of `new` over `old` at `subresource`."""
    md = new.setdefault("metadata", {})
    if not isinstance(md, dict):
        raise errors.bad_request("metadata must be an object")
    md["name"] = name
    if rt.namespaced:
        if md.get("namespace") and md["namespace"] != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        md["namespace"] = namespace
    new["apiVersion"], new["kind"] = rt.api_version, rt.kind
    if subresource == "status":
        if not strategy.has_status_subresource(rt) and rt is not kinds.NAMESPACES:
            raise errors.not_found(rt, f"{name}/status")
        return strategy.merge_status_update(new, old)
    if subresource == "finalize" and rt is kinds.NAMESPACES:
        result = meta.deep_copy(old)
        result["spec"] = {
            **(old.get("spec") or {}),
            "finalizers": (new.get("spec") or {}).get("finalizers") or [],
        }
        return result
    if subresource:
        raise errors.not_found(rt, f"{name}/{subresource}")
    validation.default(rt, new)
    return strategy.merge_main_update(rt, new, old)
