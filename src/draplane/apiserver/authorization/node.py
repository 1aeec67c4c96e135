"""The Node authorizer: what a kubelet (`system:node:<name>` in `system:nodes`) may do
(plugin/pkg/auth/authorizer/node/node_authorizer.go, with AuthorizeNodeWithSelectors).

It decides on the kinds a node reads through the graph, only by name and only with a path from
a pod bound to the node: secrets and config maps (get, and list and watch of one name, never
the collection), PersistentVolumeClaims (get; `status` update), PersistentVolumes and resource
claims (get), and such pods' service accounts (get, and create of their `token`, nothing
else). It also decides its own Lease in `kube-node-lease`, pods (get a bound pod; list and
watch only with `spec.nodeName=<node>`; create, delete, `status` and `eviction`, which
NodeRestriction narrows), Nodes (reads of its own only) and ResourceSlices (named ones of its
own node only). Everything else is left to the `system:node` rules, which the authorizer
applies itself (the `system:node` binding has no subjects). Anyone not a node gets NO_OPINION.
"""

from __future__ import annotations

from collections.abc import Callable

from draplane.api import kinds
from draplane.api.auth import NODE_LEASE_NAMESPACE, SYSTEM_NODES, UserInfo
from draplane.api.errors import StatusError
from draplane.api.fieldselector import POD_FIELDS, RESOURCE_SLICE_FIELDS, selectable
from draplane.api.kinds import ResourceType
from draplane.api.selectors import FieldSelector
from draplane.apiserver.authorization import NO_OPINION, Attributes, Decision, Result, Rules
from draplane.apiserver.nodegraph import (
    CLAIM,
    CONFIGMAP,
    PV,
    PVC,
    SECRET,
    SERVICEACCOUNT,
    NodeGraph,
)

_ALLOW = Result(Decision.ALLOW)
_READ = frozenset({"get", "list", "watch"})

NodeRules = Callable[[Attributes], bool]
"""Whether the `system:node` ClusterRole's rules allow the request."""


def _no(reason: str) -> Result:
    return Result(Decision.NO_OPINION, reason)


class NodeAuthorizer:
    """Implements `Authorizer` and `RuleResolver`."""

    def __init__(self, graph: NodeGraph, node_rules: NodeRules) -> None:
        self._graph = graph
        self._node_rules = node_rules

    def authorize(self, attrs: Attributes) -> Result:
        user = attrs.user
        if SYSTEM_NODES not in user.groups:
            return NO_OPINION
        node = user.node_name
        if node is None:
            return _no(f'unknown node for user "{user.name}"')
        if attrs.resource_request:
            decide = _DECIDERS.get((attrs.api_group, attrs.resource))
            if decide is not None:
                return decide(self, node, attrs)
        return _ALLOW if self._node_rules(attrs) else NO_OPINION

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return node_rules_for(user, namespace)

    # --- the graph kinds -----------------------------------------------------------------

    def _path(self, node: str, attrs: Attributes, resource: str) -> Result:
        """authorize: an object named, with a path to the node."""
        if not attrs.name:
            return _no("No Object name found")
        if self._graph.has_path(node, resource, attrs.namespace, attrs.name):
            return _ALLOW
        return _no(f"no relationship found between node '{node}' and this object")

    def _read_namespaced(self, node: str, attrs: Attributes, resource: str) -> Result:
        """authorizeReadNamespacedObject: get, list and watch of one named object (the kubelet
        watches a secret with `fieldSelector=metadata.name=<name>`), never the collection."""
        if attrs.verb not in _READ:
            return _no("can only read resources of this type")
        if attrs.subresource:
            return _no("cannot read subresource")
        if not attrs.namespace:
            return _no("can only read namespaced object of this type")
        return self._path(node, attrs, resource)

    def _get(self, node: str, attrs: Attributes, resource: str) -> Result:
        """authorizeGet."""
        if attrs.verb != "get":
            return _no("can only get individual resources of this type")
        if attrs.subresource:
            return _no("cannot get subresource")
        return self._path(node, attrs, resource)

    def _secrets(self, node: str, attrs: Attributes) -> Result:
        return self._read_namespaced(node, attrs, SECRET)

    def _configmaps(self, node: str, attrs: Attributes) -> Result:
        return self._read_namespaced(node, attrs, CONFIGMAP)

    def _claims(self, node: str, attrs: Attributes) -> Result:
        return self._get(node, attrs, CLAIM)

    def _persistent_volume_claims(self, node: str, attrs: Attributes) -> Result:
        if attrs.subresource == "status":  # authorizeStatusUpdate (volume expansion)
            if attrs.verb not in ("update", "patch"):
                return _no("can only get/update/patch this type")
            return self._path(node, attrs, PVC)
        return self._get(node, attrs, PVC)

    def _persistent_volumes(self, node: str, attrs: Attributes) -> Result:
        return self._get(node, attrs, PV)

    def _serviceaccounts(self, node: str, attrs: Attributes) -> Result:
        """authorizeServiceAccount: get (KubeletServiceAccountTokenForCredentialProviders, beta
        and on since 1.34) and the `token` of a service account of a pod on the node."""
        if attrs.verb == "get" and not attrs.subresource:
            return self._read_namespaced(node, attrs, SERVICEACCOUNT)
        if attrs.verb != "create" or not attrs.name:
            return _no("can only create tokens for individual service accounts")
        if attrs.subresource != "token":
            return _no("can only create token subresource of serviceaccount")
        return self._path(node, attrs, SERVICEACCOUNT)

    def _leases(self, node: str, attrs: Attributes) -> Result:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return _no("can only get, create, update, patch, or delete a node lease")
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return _no(f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')
        if attrs.verb != "create" and attrs.name != node:
            return _no("can only access node lease with the same name as the requesting node")
        return _ALLOW

    def _pods(self, node: str, attrs: Attributes) -> Result:
        verb, sub = attrs.verb, attrs.subresource
        if sub == "status" and verb in ("update", "patch"):
            return _ALLOW
        if sub == "eviction" and verb == "create":
            return _ALLOW
        if sub:
            return _no(f"cannot {verb} subresource {sub}")
        if verb in ("create", "delete"):
            return _ALLOW
        if verb == "get":
            if self._graph.pod_node(attrs.namespace, attrs.name) == node:
                return _ALLOW
            return _no(f"no relationship found between node '{node}' and this object")
        if verb in ("list", "watch"):
            if _selected_node(attrs) == node:
                return _ALLOW
            if attrs.name and self._graph.pod_node(attrs.namespace, attrs.name) == node:
                return _ALLOW
            return _no("can only list/watch pods with spec.nodeName field selector")
        return _no(f"cannot {verb} pods")

    def _nodes(self, node: str, attrs: Attributes) -> Result:
        verb, sub = attrs.verb, attrs.subresource
        if sub == "status" and verb in ("update", "patch"):
            return _ALLOW
        if not sub and verb in ("create", "update", "patch"):
            return _ALLOW
        if verb in _READ and not sub:
            if not attrs.name:
                return _no(f"node '{node}' cannot read all nodes, only its own Node object")
            if attrs.name != node:
                return _no(f"node '{node}' cannot read '{attrs.name}', only its own Node object")
            return _ALLOW
        return _ALLOW if self._node_rules(attrs) else NO_OPINION

    def _slices(self, node: str, attrs: Attributes) -> Result:
        """ResourceSlices (1.36 mode): create of any (NodeRestriction requires the node's own
        `spec.nodeName`); get, update, patch and delete only of a slice the graph links to the
        node (its `spec.nodeName`); list, watch and deletecollection only with the
        `spec.nodeName=<node>` field selector."""
        verb = attrs.verb
        if attrs.subresource:
            return _no("cannot authorize ResourceSlice subresources")
        if verb == "create":
            return _ALLOW
        if verb in ("get", "update", "patch", "delete"):
            if not attrs.name:
                return _no("No Object name found")
            if self._graph.slice_node(attrs.name) == node:
                return _ALLOW
            return _no(f"no relationship found between node '{node}' and this object")
        if verb in ("list", "watch", "deletecollection"):
            if _selected_node(attrs, kinds.RESOURCE_SLICES) == node:
                return _ALLOW
            return _no(
                "can only list/watch/deletecollection resourceslices with nodeName field selector"
            )
        return _no(f"cannot '{verb}' ResourceSlice")


_NODE_NAME_FIELDS = {
    kinds.PODS: selectable(POD_FIELDS),
    kinds.RESOURCE_SLICES: selectable(RESOURCE_SLICE_FIELDS),
}
"""The selectable fields of the kinds a node lists by `spec.nodeName` (their declarations')."""


def _selected_node(attrs: Attributes, rt: ResourceType = kinds.PODS) -> str | None:
    if not attrs.field_selector:
        return None
    try:
        return FieldSelector.parse(attrs.field_selector, _NODE_NAME_FIELDS[rt]).exact(
            "spec.nodeName"
        )
    except StatusError:
        return None


_DECIDERS: dict[tuple[str, str], Callable[[NodeAuthorizer, str, Attributes], Result]] = {
    ("", "secrets"): NodeAuthorizer._secrets,
    ("", "configmaps"): NodeAuthorizer._configmaps,
    ("", PVC): NodeAuthorizer._persistent_volume_claims,
    ("", PV): NodeAuthorizer._persistent_volumes,
    (kinds.RESOURCE_GROUP, "resourceclaims"): NodeAuthorizer._claims,
    ("", "serviceaccounts"): NodeAuthorizer._serviceaccounts,
    (kinds.COORDINATION_GROUP, "leases"): NodeAuthorizer._leases,
    ("", "pods"): NodeAuthorizer._pods,
    ("", "nodes"): NodeAuthorizer._nodes,
    (kinds.RESOURCE_GROUP, "resourceslices"): NodeAuthorizer._slices,
}


def node_rules_for(user: UserInfo, namespace: str) -> Rules:
    """Rules review for a node: the Node authorizer does not resolve rules."""
    if SYSTEM_NODES in user.groups:
        return Rules(incomplete=True, error="node authorizer does not support user rule resolution")
    return Rules()
