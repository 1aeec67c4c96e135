"""Object helpers over JSON-shaped dicts: metadata accessors, owner references, copying, and
the pod reads every component shares (`pod_spec`, `pod_status`, `node_name`, `pod_claims`).

Objects are plain dicts exactly as on the wire (camelCase keys). What a store, informer or lister
returns is read-only by contract: call `deep_copy` before changing anything. The readers take any
object: an untyped `Obj` or one of the TypedDicts of `draplane.api.types` (`ObjLike`).
"""

from collections.abc import Mapping
from typing import Any, cast, overload

import orjson

from draplane.api.types import ObjectMeta, Pod, PodResourceClaim, PodSpec, PodStatus

Obj = dict[str, Any]
ObjLike = Mapping[str, Any]
"""An object to read: an `Obj`, or a TypedDict of `draplane.api.types` (a Pod, a claim, ...)."""


def deep_copy(obj: ObjLike) -> Obj:
    """A deep copy via an orjson round trip (several times faster than copy.deepcopy)."""
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


@overload
def metadata(obj: Obj) -> Obj: ...  # type: ignore[overload-overlap]


@overload
def metadata(obj: ObjLike) -> ObjectMeta: ...


def metadata(obj: ObjLike) -> Any:
    """The object's metadata ({} when it has none): an `ObjectMeta` for a typed object, an
    `Obj` for an untyped one."""
    return obj.get("metadata") or {}


def name(obj: ObjLike) -> str:
    return str(metadata(obj).get("name") or "")


def namespace(obj: ObjLike) -> str:
    return str(metadata(obj).get("namespace") or "")


def uid(obj: ObjLike) -> str:
    return str(metadata(obj).get("uid") or "")


def resource_version(obj: ObjLike) -> str:
    return str(metadata(obj).get("resourceVersion") or "")


def labels(obj: ObjLike) -> dict[str, str]:
    value: dict[str, str] = metadata(obj).get("labels") or {}
    return value


def annotations(obj: ObjLike) -> dict[str, str]:
    value: dict[str, str] = metadata(obj).get("annotations") or {}
    return value


def finalizers(obj: ObjLike) -> list[str]:
    value: list[str] = metadata(obj).get("finalizers") or []
    return value


def deletion_timestamp(obj: ObjLike) -> str | None:
    value = metadata(obj).get("deletionTimestamp")
    return str(value) if value else None


def owner_references(obj: ObjLike) -> list[Obj]:
    """The owner references, as plain dicts (`OwnerReference`s of a typed object)."""
    return cast(list[Obj], metadata(obj).get("ownerReferences") or [])


def controller_ref(obj: ObjLike) -> Obj | None:
    """The first owner reference with `controller: true`, as metav1.GetControllerOf."""
    for ref in owner_references(obj):
        if ref.get("controller"):
            return ref
    return None


def key(obj: ObjLike) -> str:
    """`namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKey)."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace") or ""
    n = md.get("name") or ""
    return f"{ns}/{n}" if ns else str(n)


def namespaced_key(obj: ObjLike) -> str:
    """`namespace/name` even for cluster-scoped objects ("/name"): the scheduler's key of a pod
    or a claim (klog.KObj's form), where `key` gives MetaNamespaceKey's."""
    md = obj.get("metadata") or {}
    return f"{md.get('namespace') or ''}/{md.get('name') or ''}"


def split_key(k: str) -> tuple[str, str]:
    """Inverse of `key`: (namespace, name); namespace is "" for cluster-scoped keys."""
    if "/" in k:
        ns, _, n = k.partition("/")
        return ns, n
    return "", k


def owner_reference(
    owner: ObjLike, *, controller: bool = True, block_owner_deletion: bool | None = None
) -> Obj:
    ref: Obj = {
        "apiVersion": owner.get("apiVersion", "v1"),
        "kind": owner.get("kind", ""),
        "name": name(owner),
        "uid": uid(owner),
    }
    if controller:
        ref["controller"] = True
    if block_owner_deletion is not None:
        ref["blockOwnerDeletion"] = block_owner_deletion
    return ref


def pod_spec(pod: Pod | Obj) -> PodSpec:
    return pod.get("spec") or {}


def pod_status(pod: Pod | Obj) -> PodStatus:
    return pod.get("status") or {}


def node_name(pod: Pod | Obj) -> str:
    """`spec.nodeName`: the node the pod is bound to, "" while it is not."""
    return (pod.get("spec") or {}).get("nodeName") or ""


def pod_claims(pod: Pod | Obj) -> list[PodResourceClaim]:
    """`spec.resourceClaims`: the pod's claims, in order."""
    return (pod.get("spec") or {}).get("resourceClaims") or []
