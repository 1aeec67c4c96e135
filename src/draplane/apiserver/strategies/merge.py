"""What a write stores: kind and namespace checks, and merging a write into the stored object
(main resource, `status`, namespace `finalize`), as the strategies' PrepareForUpdate do."""

from __future__ import annotations

from draplane.api import errors, meta, validation
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.request import NO_OPTIONS, Options
from draplane.api.schema import Schemas
from draplane.apiserver.strategies import ResourceStrategy

# Metadata fields a write may not change (set by the server).
SERVER_META = (
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


def check_type(
    rt: ResourceType,
    obj: Obj,
    schemas: Schemas,
    options: Options = NO_OPTIONS,
    *,
    prune: bool = True,
) -> None:
    """The body is of kind `rt` and decodes as it in `schemas`
    (`validation.require_field_types`)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if (api_version and api_version != rt.api_version) or (kind and kind != rt.kind):
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({rt.api_version})"
            if api_version != rt.api_version
            else f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
        )
    validation.require_field_types(
        rt,
        obj,
        schemas,
        mode=options.field_validation,
        duplicates=options.duplicate_fields,
        prune=prune,
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
    strategy: ResourceStrategy,
    subresource: str,
    new: Obj,
    old: Obj,
    namespace: str,
    name: str,
    options: Options = NO_OPTIONS,
    *,
    schemas: Schemas,
    decoded: bool = False,
) -> Obj:
    """The object to store for a write of `new` over `old` at `subresource`, decoded as the Go
    types of `schemas` (`decoded`: `new` passed the decoding step already)."""
    rt = strategy.rt
    if not decoded:
        validation.require_field_types(
            rt, new, schemas, mode=options.field_validation, duplicates=options.duplicate_fields
        )
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
        if not strategy.status_subresource:
            raise errors.not_found(rt, f"{name}/status")
        merged = merge_status_update(new, old)
        if strategy.prepare_for_status_update is not None:
            strategy.prepare_for_status_update(merged, old)
        if strategy.status_writes_annotations and "annotations" in (new.get("metadata") or {}):
            merged["metadata"]["annotations"] = new["metadata"]["annotations"]
        strategy.fill_status(merged)
        if rt.custom is not None:
            # Pruning and defaulting change the object in place: not the stored one's parts.
            merged = meta.deep_copy(merged)
            strategy.normalize(merged)
        return merged
    if subresource == "finalize" and "finalize" in rt.subresources:
        result = meta.deep_copy(old)
        spec = new.get("spec")
        if spec is not None and not isinstance(spec, dict):
            raise errors.invalid_object(
                rt.kind, name, [errors.invalid("spec", spec, "must be an object")], rt
            )
        result["spec"] = {
            **(old.get("spec") or {}),
            "finalizers": (spec or {}).get("finalizers") or [],
        }
        return result
    if subresource == "binding":
        return new  # the binding mutation built the whole pod
    if subresource:
        raise errors.not_found(rt, f"{name}/{subresource}")
    strategy.apply_defaults(new)
    strategy.normalize(new)
    return merge_main_update(strategy, new, old)


def merge_main_update(strategy: ResourceStrategy, new: Obj, old: Obj) -> Obj:
    """A main-resource update: server metadata from `old`, status from `old`."""
    md = new.setdefault("metadata", {})
    old_md = old.get("metadata") or {}
    for field in SERVER_META:
        if field in old_md:
            md[field] = old_md[field]
        else:
            md.pop(field, None)
    if strategy.status_subresource:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    if strategy.prepare_for_update is not None:
        strategy.prepare_for_update(new, old)
    if _spec_changed(strategy, new, old) or (
        strategy.generation_on_annotations
        and (md.get("annotations") or {}) != (old_md.get("annotations") or {})
    ):
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
            and field not in SERVER_META
            and field not in ("name", "namespace")
        ):
            md[field] = value
    result["metadata"] = md
    if "status" in new:
        result["status"] = new["status"]
    return result


def _spec_changed(strategy: ResourceStrategy, new: Obj, old: Obj) -> bool:
    ignored = {"metadata", "status", "kind", "apiVersion"}
    if not strategy.status_subresource:
        ignored.discard("status")
    keys = (set(new) | set(old)) - ignored
    return any(new.get(k) != old.get(k) for k in keys)
