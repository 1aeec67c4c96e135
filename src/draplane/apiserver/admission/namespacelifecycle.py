"""NamespaceLifecycle: no new content in a missing (404) or terminating (403) namespace, and the
system namespaces `default`, `kube-system` and `kube-public` may not be deleted
(plugin/pkg/admission/namespace/lifecycle)."""

from __future__ import annotations

from draplane.api import errors, kinds
from draplane.apiserver.admission import AdmissionAttributes, forbidden
from draplane.storage.interface import Storage

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


class NamespaceLifecycle:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    async def admit(self, a: AdmissionAttributes) -> None:
        if a.operation == "DELETE" and a.rt is kinds.NAMESPACES and a.name in IMMORTAL_NAMESPACES:
            raise forbidden(a, "this namespace may not be deleted")
        if a.operation != "CREATE" or not a.rt.namespaced:
            return
        if a.subresource:
            return
        ns = await self._storage.get(kinds.NAMESPACES.key, "", a.namespace)
        if ns is None:
            raise errors.not_found(kinds.NAMESPACES, a.namespace)
        if (ns.get("metadata") or {}).get("deletionTimestamp") and a.rt is not kinds.EVENTS:
            name = a.name or str(((a.obj or {}).get("metadata") or {}).get("name") or "")
            subject = f'{a.rt.group_resource} "{name}"' if name else a.rt.group_resource
            err = errors.forbidden_message(
                f"{subject} is forbidden: unable to create new content in namespace "
                f"{a.namespace} because it is being terminated",
                a.rt,
                name or None,
            )
            err.details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {a.namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise err
