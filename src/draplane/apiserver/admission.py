"""Admission: namespace lifecycle and node restrictions applied to every write.

- Namespace lifecycle: no creates in a missing namespace (404) or a terminating one (403).
- NodeRestriction: a node user (`system:node:<name>`) may modify only its own Node and Lease and
  the pods bound to it, may not change a pod's labels or `status.resourceClaimStatuses`, and may
  read a ResourceClaim only when a pod bound to it names that claim in its status (node
  authorizer graph, spec/claim-controller.md §8.2-8.3).
"""

from __future__ import annotations

from draplane import dra
from draplane.api import errors, kinds
from draplane.api.auth import UserInfo
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver.nodegraph import NodeGraph
from draplane.storage.interface import Storage


async def check_namespace(
    storage: Storage, rt: ResourceType, namespace: str, *, name: str = ""
) -> None:
    if not rt.namespaced:
        return
    ns = await storage.get(kinds.NAMESPACES.key, "", namespace)
    if ns is None:
        raise errors.not_found(kinds.NAMESPACES, namespace)
    if (ns.get("metadata") or {}).get("deletionTimestamp") and rt is not kinds.EVENTS:
        subject = f'{rt.group_resource} "{name}"' if name else rt.group_resource
        err = errors.forbidden_message(
            f"{subject} is forbidden: unable to create new content in namespace {namespace} "
            "because it is being terminated",
            rt,
            name or None,
        )
        err.details["causes"] = [
            {
                "reason": "NamespaceTerminating",
                "message": f"namespace {namespace} is being terminated",
                "field": "metadata.namespace",
            }
        ]
        raise err


def node_may_write(
    user: UserInfo, rt: ResourceType, *, obj: Obj | None, old: Obj | None, subresource: str
) -> None:
    """Raise 403 when a node user writes what NodeRestriction forbids."""
    node = user.node_name
    if node is None:
        return
    target = old or obj or {}
    if rt is kinds.NODES:
        if (target.get("metadata") or {}).get("name") != node:
            raise errors.forbidden_message(
                f'node "{node}" is not allowed to modify node '
                f'"{(target.get("metadata") or {}).get("name")}"',
                rt,
            )
        return
    if rt is kinds.PODS:
        if old is not None and (old.get("spec") or {}).get("nodeName") != node:
            raise errors.forbidden_message(
                f'node "{node}" can only update pod status for pods with spec.nodeName set to '
                "itself",
                rt,
            )
        if old is not None and obj is not None:
            if (obj.get("metadata") or {}).get("labels") != (old.get("metadata") or {}).get(
                "labels"
            ) and subresource == "status":
                raise errors.forbidden_message(
                    f'node "{node}" cannot update labels through pod status', rt
                )
            if _claim_statuses(obj) != _claim_statuses(old):
                raise errors.forbidden_message(
                    f'node "{node}" cannot update resource claim statues', rt
                )
        return
    if rt in (kinds.EVENTS, kinds.LEASES):
        return
    raise errors.forbidden_message(
        f'User "{user.name}" cannot modify resource "{rt.resource}" in API group "{rt.group}"', rt
    )


def _claim_statuses(pod: Obj) -> list[tuple[object, object]]:
    """`status.resourceClaimStatuses` as NodeRestriction compares it: name, and the claim name
    or None (an omitted and an explicit null `resourceClaimName` are the same)."""
    entries = (pod.get("status") or {}).get("resourceClaimStatuses") or []
    return [(e.get("name"), e.get("resourceClaimName") or None) for e in entries]


async def node_may_read_claim(
    storage: Storage, graph: NodeGraph, user: UserInfo, namespace: str, name: str
) -> None:
    """A node may GET a claim only when a pod bound to it references it through its status.
    The graph answers at once; a miss is checked against the store (the graph follows the
    change stream and may trail a write that was just acknowledged)."""
    node = user.node_name
    if node is None or graph.allows(node, namespace, name):
        return
    pods, _ = await storage.list(kinds.PODS.key, namespace)
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") != node:
            continue
        if any(claim_name == name for _, claim_name in dra.pod_claim_names(pod)):
            return
    raise errors.forbidden_message(
        f'resourceclaims.resource.k8s.io "{name}" is forbidden: User "{user.name}" cannot get '
        f'resource "resourceclaims" in API group "resource.k8s.io" in the namespace '
        f"\"{namespace}\": no relationship found between node '{node}' and this object",
        kinds.RESOURCE_CLAIMS,
        name,
    )
