"""The node authorizer's claim graph: edges from pod status, kept current by pod events."""

from __future__ import annotations

import pytest

from draplane.api import kinds, versions
from draplane.api.meta import Obj
from draplane.apiserver.nodegraph import NodeGraph
from draplane.storage.interface import Event, EventType
from draplane.testing.builders import make_pod

USER_CLAIM = make_pod("user").claim_ref("gpu", "shared").node("node-0").obj()
TEMPLATE_POD = (
    make_pod("tmpl").claim_template("gpu", "t").claim_status("gpu", "tmpl-gpu-x").node("node-0")
).obj()
NO_CLAIM_NEEDED = make_pod("none").claim_template("gpu", "t").claim_status("gpu", None).obj()
NOT_CREATED = make_pod("later").claim_template("gpu", "t").node("node-0").obj()
UNBOUND = make_pod("unbound").claim_ref("gpu", "shared").obj()
FLAT_CLAIM = (
    make_pod("flat").claim_ref("gpu", "flat-claim", mode=versions.STRUCTURED).node("node-0").obj()
)
EXTENDED = (
    make_pod("ext")
    .node("node-0")
    .set(
        "status.extendedResourceClaimStatus",
        {"resourceClaimName": "ext-extended-resources-x", "requestMappings": []},
    )
    .obj()
)


def event(type_: EventType, obj: Obj, prev: Obj | None = None) -> Event:
    return Event(type_, kinds.PODS.key, obj, 1, prev)


@pytest.mark.parametrize(
    ("pods", "node", "claim", "allowed"),
    [
        pytest.param([USER_CLAIM], "node-0", "shared", True, id="user-claim"),
        pytest.param([USER_CLAIM], "node-1", "shared", False, id="other-node"),
        pytest.param([TEMPLATE_POD], "node-0", "tmpl-gpu-x", True, id="template-claim-in-status"),
        pytest.param([NO_CLAIM_NEEDED], "node-0", "tmpl-gpu-x", False, id="no-claim-needed"),
        pytest.param([NOT_CREATED], "node-0", "later-gpu-x", False, id="not-created-yet"),
        pytest.param([UNBOUND], "node-0", "shared", False, id="unbound-pod"),
        pytest.param([FLAT_CLAIM], "node-0", "flat-claim", True, id="1.36-pod-claim"),
        pytest.param(
            [EXTENDED], "node-0", "ext-extended-resources-x", True, id="extended-resource-claim"
        ),
        pytest.param(
            [EXTENDED], "node-1", "ext-extended-resources-x", False, id="extended-other-node"
        ),
    ],
)
def test_edges(pods: list[Obj], node: str, claim: str, allowed: bool) -> None:
    graph = NodeGraph()
    graph.load(pods)
    assert graph.allows(node, "default", claim) is allowed


def test_events_add_move_and_remove_edges() -> None:
    graph = NodeGraph()
    graph.observe(event("ADDED", UNBOUND))
    assert not graph.allows("node-0", "default", "shared")
    bound = {**UNBOUND, "spec": {**UNBOUND["spec"], "nodeName": "node-0"}}
    graph.observe(event("MODIFIED", bound, UNBOUND))
    assert graph.allows("node-0", "default", "shared")
    graph.observe(event("ADDED", USER_CLAIM))
    graph.observe(event("DELETED", bound))
    assert graph.allows("node-0", "default", "shared"), "the other pod still uses it"
    graph.observe(event("DELETED", USER_CLAIM))
    assert not graph.allows("node-0", "default", "shared")
    assert not graph.allows("node-0", "other", "shared")


SECRETS_POD = (
    make_pod("web")
    .node("node-0")
    .set("spec.imagePullSecrets", [{"name": "pull"}])
    .volume("s", secret={"secretName": "vol-secret"})
    .volume("p", projected={"sources": [{"secret": {"name": "proj-secret"}}]})
    .volume("csi", csi={"driver": "d", "nodePublishSecretRef": {"name": "csi-s"}})
    .volume("cm", configMap={"name": "vol-cm"})
    .volume("data", persistentVolumeClaim={"claimName": "data"})
    .volume("scratch", ephemeral={"volumeClaimTemplate": {"spec": {}}})
    .container(
        "app",
        env=[{"name": "E", "valueFrom": {"secretKeyRef": {"name": "env-secret", "key": "k"}}}],
        envFrom=[{"configMapRef": {"name": "envfrom-cm"}}],
    )
    .set("spec.serviceAccountName", "robot")
    .obj()
)
MIRROR_POD = (
    make_pod("static")
    .node("node-0")
    .annotation("kubernetes.io/config.mirror", "x")
    .volume("s", secret={"secretName": "vol-secret"})
    .obj()
)
BOUND_PV = {
    "metadata": {"name": "pv-data"},
    "spec": {
        "claimRef": {"namespace": "default", "name": "data"},
        "csi": {"driver": "d", "nodeStageSecretRef": {"name": "pv-secret"}},
    },
}


@pytest.mark.parametrize(
    ("pods", "node", "resource", "name", "allowed"),
    [
        pytest.param([SECRETS_POD], "node-0", "secrets", "pull", True, id="image-pull-secret"),
        pytest.param([SECRETS_POD], "node-0", "secrets", "vol-secret", True, id="secret-volume"),
        pytest.param([SECRETS_POD], "node-0", "secrets", "proj-secret", True, id="projected"),
        pytest.param([SECRETS_POD], "node-0", "secrets", "csi-s", True, id="csi-secret"),
        pytest.param([SECRETS_POD], "node-0", "secrets", "env-secret", True, id="env-secret"),
        pytest.param([SECRETS_POD], "node-1", "secrets", "vol-secret", False, id="other-node"),
        pytest.param([SECRETS_POD], "node-0", "secrets", "vol-cm", False, id="secret-not-cm"),
        pytest.param([SECRETS_POD], "node-0", "configmaps", "vol-cm", True, id="cm-volume"),
        pytest.param([SECRETS_POD], "node-0", "configmaps", "envfrom-cm", True, id="cm-envfrom"),
        pytest.param(
            [SECRETS_POD], "node-0", "persistentvolumeclaims", "data", True, id="pvc-volume"
        ),
        pytest.param(
            [SECRETS_POD], "node-0", "persistentvolumeclaims", "web-scratch", True, id="ephemeral"
        ),
        pytest.param([SECRETS_POD], "node-0", "serviceaccounts", "robot", True, id="sa"),
        pytest.param([SECRETS_POD], "node-0", "serviceaccounts", "default", False, id="not-sa"),
        pytest.param([MIRROR_POD], "node-0", "secrets", "vol-secret", False, id="mirror-pod"),
    ],
)
def test_pod_references(
    pods: list[Obj], node: str, resource: str, name: str, allowed: bool
) -> None:
    graph = NodeGraph()
    graph.load(pods)
    assert graph.has_path(node, resource, "default", name) is allowed


def test_mirror_pod_is_still_on_its_node() -> None:
    graph = NodeGraph()
    graph.load([MIRROR_POD])
    assert graph.pod_node("default", "static") == "node-0"


def test_persistent_volume_reaches_node_through_its_claim() -> None:
    graph = NodeGraph()
    graph.load([SECRETS_POD], pvs=[BOUND_PV])
    assert graph.has_path("node-0", "persistentvolumes", "", "pv-data")
    assert graph.has_path("node-0", "secrets", "default", "pv-secret")
    assert not graph.has_path("node-1", "persistentvolumes", "", "pv-data")
    assert not graph.has_path("node-1", "secrets", "default", "pv-secret")

    graph.observe(Event("DELETED", "persistentvolumes", BOUND_PV, 2, None))
    assert not graph.has_path("node-0", "persistentvolumes", "", "pv-data")
    assert not graph.has_path("node-0", "secrets", "default", "pv-secret")

    graph.observe(Event("ADDED", "persistentvolumes", BOUND_PV, 3, None))
    graph.observe(event("DELETED", SECRETS_POD))
    assert not graph.has_path("node-0", "persistentvolumes", "", "pv-data"), "no pod uses it"
