"""NodeRestriction: what a node (`system:node:<name>` in `system:nodes`) may change
(plugin/pkg/admission/noderestriction).

- pods: create only mirror pods bound to itself, owned (as controller, with its uid) by its
  Node, referencing no service account, secret, config map, cluster trust bundle,
  PersistentVolumeClaim or resource claim; delete only pods bound to itself; never update
  the pod object; `status` only of its own pods, without changing labels or
  `status.resourceClaimStatuses` or `status.extendedResourceClaimStatus`; no other subresource.
- nodes: only its own Node; no `node-restriction.kubernetes.io/` labels, and an update may not
  change taints or ownerReferences.
- leases: only `kube-node-lease/<its name>`.
- serviceaccounts/token: only bound to a pod scheduled on itself.
"""

from __future__ import annotations

from draplane.api import errors, kinds, podrefs
from draplane.api.auth import NODE_LEASE_NAMESPACE, SYSTEM_NODES
from draplane.api.meta import Obj
from draplane.apiserver.admission import AdmissionAttributes, forbidden
from draplane.storage.interface import Storage

MIRROR_ANNOTATION = podrefs.MIRROR_ANNOTATION
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
            await self._mirror_pod(a, node)
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

    async def _mirror_pod(self, a: AdmissionAttributes, node: str) -> None:
        """admitPodCreate: a mirror pod bound to the node, owned by its Node, referencing no
        other API object (a node must not grant itself access through a pod)."""
        pod = a.obj or {}
        md, spec = _md(pod), _spec(pod)
        if not podrefs.is_mirror(pod):
            raise forbidden(
                a,
                f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can only '
                "create mirror pods",
            )
        if spec.get("nodeName") != node:
            raise forbidden(
                a, f'node "{node}" can only create pods with spec.nodeName set to itself'
            )
        await self._owner(a, node, md.get("ownerReferences") or [])
        if spec.get("serviceAccountName"):
            raise forbidden(
                a, f'node "{node}" can not create pods that reference a service account'
            )
        for what, refs in (
            ("secrets", podrefs.secret_names(pod)),
            ("configmaps", podrefs.configmap_names(pod)),
        ):
            if next(refs, None) is not None:
                raise forbidden(a, f'node "{node}" can not create pods that reference {what}')
        if podrefs.references_cluster_trust_bundle(pod):
            raise forbidden(
                a, f'node "{node}" can not create pods that reference clustertrustbundles'
            )
        if next(podrefs.persistent_volume_claim_names(pod, ephemeral=False), None) is not None:
            raise forbidden(
                a, f'node "{node}" can not create pods that reference persistentvolumeclaims'
            )
        if spec.get("resourceClaims"):
            raise forbidden(a, f'node "{node}" can not create pods that reference resourceclaims')

    async def _owner(self, a: AdmissionAttributes, node: str, owners: object) -> None:
        if not isinstance(owners, list) or len(owners) > 1:
            raise forbidden(
                a, f'node "{node}" can only create pods with a single owner reference set to itself'
            )
        owner = owners[0] if owners else None
        if not isinstance(owner, dict) or (
            owner.get("apiVersion"),
            owner.get("kind"),
            owner.get("name"),
        ) != ("v1", "Node", node):
            raise forbidden(
                a, f'node "{node}" can only create pods with an owner reference set to itself'
            )
        if owner.get("controller") is not True:
            raise forbidden(
                a,
                f'node "{node}" can only create pods with a controller owner reference set to '
                "itself",
            )
        if owner.get("blockOwnerDeletion") is True:
            raise forbidden(
                a, f'node "{node}" must not set blockOwnerDeletion on an owner reference'
            )
        registered = await self._storage.get(kinds.NODES.key, "", node)
        if registered is None:
            raise errors.not_found(kinds.NODES, node)
        if owner.get("uid") != _md(registered).get("uid"):
            raise forbidden(
                a,
                f"node {node} UID mismatch: expected {owner.get('uid') or ''} got "
                f"{_md(registered).get('uid') or ''}",
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
        """admitServiceAccount: a node's TokenRequest is bound to a pod scheduled on it."""
        if a.operation != "CREATE":
            return
        ref = _spec(a.obj).get("boundObjectRef")
        if (
            not isinstance(ref, dict)
            or ref.get("apiVersion") != "v1"
            or ref.get("kind") != "Pod"
            or not ref.get("name")
        ):
            raise forbidden(a, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise forbidden(a, "node requested token with a pod binding without a uid")
        pod = await self._storage.get(kinds.PODS.key, a.namespace, str(ref["name"]))
        if pod is None:
            raise errors.not_found(kinds.PODS, str(ref["name"]))
        if _md(pod).get("uid") != ref.get("uid"):
            raise forbidden(
                a,
                f"the UID in the bound object reference ({ref['uid']}) does not match the UID "
                "in record. The object might have been deleted and then recreated",
            )
        if _spec(pod).get("nodeName") != node:
            raise forbidden(a, "node requested token bound to a pod scheduled on a different node")
