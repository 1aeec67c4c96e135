"""NodeRestriction: what a node (`system:node:<name>` in `system:nodes`) may change
(plugin/pkg/admission/noderestriction).

- pods: create only mirror pods bound to itself, owned by its Node, referencing no service
  account, config map, secret or resource claim; delete only pods bound to itself; never update
  the pod object; `status` only of its own pods, without changing labels or
  `status.resourceClaimStatuses` or `status.extendedResourceClaimStatus`; no other subresource.
- nodes: only its own Node; no `node-restriction.kubernetes.io/` labels, and an update may not
  change taints or ownerReferences.
- leases: only `kube-node-lease/<its name>`.
- serviceaccounts/token: only bound to a pod scheduled on itself.
"""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.auth import NODE_LEASE_NAMESPACE, SYSTEM_NODES
from draplane.api.meta import Obj
from draplane.apiserver.admission import AdmissionAttributes, forbidden
from draplane.storage.interface import Storage

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_RESTRICTED_LABEL_PREFIX = "node-restriction.kubernetes.io/"


def _md(obj: Obj | None) -> Obj:
    md = (obj or {}).get("metadata")
    return md if isinstance(md, dict) else {}


def _spec(obj: Obj | None) -> Obj:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _claim_statuses(pod: Obj | None) -> list[tuple[object, object]]:
    """`status.resourceClaimStatuses` as NodeRestriction compares them: the name, and the claim
    name or None (an omitted and an explicit null `resourceClaimName` are the same)."""
    status = (pod or {}).get("status")
    entries = (status.get("resourceClaimStatuses") if isinstance(status, dict) else None) or []
    if not isinstance(entries, list):
        return [("<invalid>", repr(entries))]
    return [
        (e.get("name"), e.get("resourceClaimName") or None) if isinstance(e, dict) else (e, None)
        for e in entries
    ]


_EXTENDED = "extendedResourceClaimStatus"


def _status_field(pod: Obj | None, name: str) -> object:
    status = (pod or {}).get("status")
    return status.get(name) if isinstance(status, dict) else None


class NodeRestriction:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    async def validate(self, a: AdmissionAttributes) -> None:
        user = a.user
        if SYSTEM_NODES not in user.groups:
            return
        node = user.node_name
        if node is None:
            raise forbidden(a, f'could not determine node from user "{user.name}"')
        if a.rt is kinds.PODS:
            await self._pod(a, node)
        elif a.rt is kinds.NODES:
            self._node(a, node)
        elif a.rt is kinds.LEASES:
            self._lease(a, node)
        elif a.rt is kinds.SERVICE_ACCOUNTS and a.subresource == "token":
            await self._token(a, node)
        elif a.rt is kinds.RESOURCE_SLICES:
            self._slice(a, node)

    def _slice(self, a: AdmissionAttributes, node: str) -> None:
        """A node creates, updates and deletes only the slices of its own `spec.nodeName`
        (the authorizer leaves the object to this check)."""
        obj = a.obj if a.operation == "CREATE" else a.old
        if _spec(obj).get("nodeName") != node:
            verb = {"CREATE": "create", "DELETE": "delete"}.get(a.operation, "update")
            raise forbidden(
                a, f"can only {verb} ResourceSlice with the same NodeName as the requesting node"
            )

    async def _pod(self, a: AdmissionAttributes, node: str) -> None:
        if a.subresource == "status":
            if _spec(a.old).get("nodeName") != node:
                raise forbidden(
                    a,
                    f'node "{node}" can only update pod status for pods with spec.nodeName '
                    "set to itself",
                )
            if _md(a.obj).get("labels") != _md(a.old).get("labels"):
                raise forbidden(a, f'node "{node}" cannot update labels through pod status')
            if _claim_statuses(a.obj) != _claim_statuses(a.old):
                raise forbidden(a, f'node "{node}" cannot update resource claim statues')
            if _status_field(a.obj, _EXTENDED) != _status_field(a.old, _EXTENDED):
                raise forbidden(a, f'node "{node}" cannot update extended resource claim status')
            return
        if a.subresource:
            raise forbidden(
                a,
                f"unexpected pod subresource \"{a.subresource}\", only 'status' and "
                "'eviction' are allowed",
            )
        if a.operation == "CREATE":
            self._mirror_pod(a, node)
        elif a.operation == "DELETE":
            if _spec(a.old).get("nodeName") != node:
                raise forbidden(
                    a, f'node "{node}" can only delete pods with spec.nodeName set to itself'
                )
        else:
            raise forbidden(
                a,
                f'unexpected operation "{a.operation}", node "{node}" can only create and '
                "delete mirror pods",
            )

    def _mirror_pod(self, a: AdmissionAttributes, node: str) -> None:
        md, spec = _md(a.obj), _spec(a.obj)
        if MIRROR_ANNOTATION not in (md.get("annotations") or {}):
            raise forbidden(
                a,
                f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can only '
                "create mirror pods",
            )
        if spec.get("nodeName") != node:
            raise forbidden(
                a, f'node "{node}" can only create pods with spec.nodeName set to itself'
            )
        owners = md.get("ownerReferences") or []
        if len(owners) != 1 or not _owned_by_node(owners[0], node):
            raise forbidden(
                a, f'node "{node}" can only create pods with an owner reference set to itself'
            )
        if spec.get("serviceAccountName"):
            raise forbidden(
                a, f'node "{node}" can not create pods that reference a service account'
            )
        if spec.get("resourceClaims"):
            raise forbidden(a, f'node "{node}" can not create pods that reference resourceclaims')
        for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            if isinstance(container, dict) and (container.get("envFrom") or _env_refs(container)):
                raise forbidden(
                    a, f'node "{node}" can not create pods that reference secrets or configmaps'
                )

    def _node(self, a: AdmissionAttributes, node: str) -> None:
        target = a.name or str(_md(a.obj).get("name") or "")
        if target != node:
            raise forbidden(a, f'node "{node}" is not allowed to modify node "{target}"')
        if a.operation == "DELETE":
            return
        labels = _md(a.obj).get("labels") or {}
        old_labels = _md(a.old).get("labels") or {}
        for key in labels:
            if (
                isinstance(key, str)
                and key.startswith(_RESTRICTED_LABEL_PREFIX)
                and labels.get(key) != old_labels.get(key)
            ):
                raise forbidden(
                    a,
                    f"is not allowed to modify labels: {key}",
                )
        if a.operation == "UPDATE" and a.old is not None:
            if _spec(a.obj).get("taints") != _spec(a.old).get("taints"):
                raise forbidden(a, f'node "{node}" is not allowed to modify taints')
            if _md(a.obj).get("ownerReferences") != _md(a.old).get("ownerReferences"):
                raise forbidden(a, f'node "{node}" is not allowed to modify ownerReferences')

    def _lease(self, a: AdmissionAttributes, node: str) -> None:
        if a.namespace != NODE_LEASE_NAMESPACE:
            raise forbidden(
                a, f"can only access leases in the {NODE_LEASE_NAMESPACE} system namespace"
            )
        target = a.name or str(_md(a.obj).get("name") or "")
        if target != node:
            raise forbidden(
                a, "can only access node lease with the same name as the requesting node"
            )

    async def _token(self, a: AdmissionAttributes, node: str) -> None:
        ref = _spec(a.obj).get("boundObjectRef")
        if not isinstance(ref, dict) or ref.get("kind") != "Pod" or not ref.get("name"):
            raise forbidden(a, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise forbidden(a, "node requested token with a pod binding without a uid")
        pod = await self._storage.get(kinds.PODS.key, a.namespace, str(ref["name"]))
        if pod is None or _md(pod).get("uid") != ref.get("uid"):
            raise forbidden(a, "the UID in the bound object reference does not match the pod")
        if _spec(pod).get("nodeName") != node:
            raise forbidden(a, "node requested token bound to a pod scheduled on a different node")


def _owned_by_node(ref: object, node: str) -> bool:
    return (
        isinstance(ref, dict)
        and ref.get("apiVersion") == "v1"
        and ref.get("kind") == "Node"
        and ref.get("name") == node
        and ref.get("controller") is True
        and not ref.get("blockOwnerDeletion")
    )


def _env_refs(container: Obj) -> bool:
    for env in container.get("env") or []:
        source = env.get("valueFrom") if isinstance(env, dict) else None
        if isinstance(source, dict) and (
            source.get("secretKeyRef") or source.get("configMapKeyRef")
        ):
            return True
    return False
