"""The Node authorizer's decisions on the kinds reached through a PersistentVolumeClaim, which
draplane does not serve yet (so the HTTP matrix cannot ask): a node may get the claims of its
pods and the volumes bound to them, update a claim's status, and nothing else."""

from __future__ import annotations

import pytest

from draplane.api.auth import SYSTEM_NODES, UserInfo
from draplane.apiserver.authorization import Attributes, Decision
from draplane.apiserver.authorization.node import NodeAuthorizer
from draplane.apiserver.nodegraph import NodeGraph
from draplane.testing.builders import make_pod

POD = make_pod("web").node("node-0").volume("data", persistentVolumeClaim={"claimName": "data"})
VOLUME = {
    "metadata": {"name": "pv-data"},
    "spec": {"claimRef": {"namespace": "default", "name": "data"}},
}
UNBOUND_VOLUME = {"metadata": {"name": "pv-free"}, "spec": {}}


def _node(name: str) -> UserInfo:
    return UserInfo(f"system:node:{name}", groups=(SYSTEM_NODES,))


@pytest.mark.parametrize(
    ("node", "verb", "resource", "namespace", "name", "subresource", "allowed", "reason"),
    [
        pytest.param("node-0", "get", "persistentvolumeclaims", "default", "data", "", True, "",
                     id="get-own-pvc"),
        pytest.param("node-1", "get", "persistentvolumeclaims", "default", "data", "", False,
                     "no relationship found between node 'node-1' and this object",
                     id="get-other-nodes-pvc"),
        pytest.param("node-0", "list", "persistentvolumeclaims", "default", "", "", False,
                     "can only get individual resources of this type", id="list-pvcs"),
        pytest.param("node-0", "patch", "persistentvolumeclaims", "default", "data", "status",
                     True, "", id="patch-own-pvc-status"),
        pytest.param("node-0", "get", "persistentvolumeclaims", "default", "data", "status",
                     False, "can only get/update/patch this type", id="get-pvc-status"),
        pytest.param("node-0", "get", "persistentvolumes", "", "pv-data", "", True, "",
                     id="get-pv-of-own-pvc"),
        pytest.param("node-1", "get", "persistentvolumes", "", "pv-data", "", False,
                     "no relationship found between node 'node-1' and this object",
                     id="get-pv-other-node"),
        pytest.param("node-0", "get", "persistentvolumes", "", "pv-free", "", False,
                     "no relationship found between node 'node-0' and this object",
                     id="get-unbound-pv"),
        pytest.param("node-0", "watch", "persistentvolumes", "", "", "", False,
                     "can only get individual resources of this type", id="watch-pvs"),
    ],
)  # fmt: skip
def test_node_reaches_volumes_through_its_pods(
    node: str,
    verb: str,
    resource: str,
    namespace: str,
    name: str,
    subresource: str,
    allowed: bool,
    reason: str,
) -> None:
    graph = NodeGraph()
    graph.load([POD.obj()], pvs=[VOLUME, UNBOUND_VOLUME])
    authorizer = NodeAuthorizer(graph, lambda attrs: False)

    result = authorizer.authorize(
        Attributes(
            _node(node),
            verb,
            resource=resource,
            subresource=subresource,
            namespace=namespace,
            name=name,
        )
    )

    assert result.decision is (Decision.ALLOW if allowed else Decision.NO_OPINION)
    assert result.reason == reason
