"""NodeRestriction through the real HTTPS path: the mirror pods a node may create, and the
TokenRequests it may make (plugin/pkg/admission/noderestriction admitPodCreate and
admitServiceAccount, with upstream's messages).

One server for the module: Nodes node-0 and node-1, namespace `team` with its `default`
service account, and pod-0 on node-0 and pod-1 on node-1 running as `default`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from draplane.api import kinds, meta
from draplane.api.auth import SYSTEM_NODES
from draplane.api.meta import Obj
from draplane.testing.builders import PodBuilder, make_node, make_pod
from draplane.testing.httpserver import HttpServer, start_http_server

NODE0 = ("system:node:node-0", (SYSTEM_NODES,))
MIRROR = "kubernetes.io/config.mirror"
pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass(frozen=True)
class Cluster:
    server: HttpServer
    node_uid: str
    pod_uids: dict[str, str]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    server = await start_http_server(tmp_path_factory.mktemp("noderestriction"))
    admin = server.client()
    await admin.create(
        kinds.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    )
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}
    await admin.create(kinds.SERVICE_ACCOUNTS, sa, "team")
    node_uid = ""
    pod_uids = {}
    for i in (0, 1):
        node = await admin.create(kinds.NODES, make_node(f"node-{i}").obj())
        node_uid = node_uid or meta.uid(node)
        pod = await admin.create(kinds.PODS, make_pod(f"pod-{i}", "team").node(f"node-{i}").obj())
        pod_uids[f"pod-{i}"] = meta.uid(pod)
    yield Cluster(server, node_uid, pod_uids)
    await server.stop()


async def _post(cluster: Cluster, path: str, body: Obj) -> tuple[int, Any]:
    async with cluster.server.session(*NODE0) as http, http.post(path, json=body) as resp:
        return resp.status, await resp.json()


# --- mirror pods ----------------------------------------------------------------------------

Shape = Callable[[PodBuilder, str], PodBuilder]
"""Changes a mirror pod of node-0 (given the Node's uid)."""


def _owned(pod: PodBuilder, uid: str, **fields: Any) -> PodBuilder:
    ref = {"apiVersion": "v1", "kind": "Node", "name": "node-0", "uid": uid, "controller": True}
    return pod.set("metadata.ownerReferences", [{**ref, **fields}])


def _mirror(name: str, uid: str, shape: Shape) -> Obj:
    pod = _owned(make_pod(name, "team").node("node-0").annotation(MIRROR, "hash"), uid)
    return shape(pod, uid).obj()


REFUSED = 'node "node-0" can not create pods that reference '


@dataclass(frozen=True)
class MirrorCase:
    shape: Shape
    message: str = ""
    code: int = 403
    """`message` empty: created."""


def _case(shape: Shape, message: str = "", code: int = 403) -> MirrorCase:
    return MirrorCase(shape, message, code)


MIRROR_CASES = {
    "mirror-pod": _case(lambda p, uid: p),
    "not-a-mirror-pod": _case(
        lambda p, uid: p.set("metadata.annotations", {}),
        f'pod does not have "{MIRROR}" annotation, node "node-0" can only create mirror pods',
    ),
    "other-node": _case(
        lambda p, uid: p.node("node-1"),
        'node "node-0" can only create pods with spec.nodeName set to itself',
    ),
    "no-owner": _case(
        lambda p, uid: p.set("metadata.ownerReferences", []),
        'node "node-0" can only create pods with an owner reference set to itself',
    ),
    "two-owners": _case(
        lambda p, uid: p.owner("ConfigMap", "x", "uid-x", controller=False),
        'node "node-0" can only create pods with a single owner reference set to itself',
    ),
    "owner-not-controller": _case(
        lambda p, uid: _owned(p, uid, controller=False),
        'node "node-0" can only create pods with a controller owner reference set to itself',
    ),
    "owner-blocks-deletion": _case(
        lambda p, uid: _owned(p, uid, blockOwnerDeletion=True),
        'node "node-0" must not set blockOwnerDeletion on an owner reference',
    ),
    "owner-uid-mismatch": _case(
        lambda p, uid: _owned(p, "not-the-uid"),
        "node node-0 UID mismatch: expected not-the-uid got {uid}",
    ),
    "service-account": _case(
        lambda p, uid: p.set("spec.serviceAccountName", "default"),
        REFUSED + "a service account",
    ),
    "secret-volume": _case(
        lambda p, uid: p.volume("s", secret={"secretName": "s"}), REFUSED + "secrets"
    ),
    "projected-secret": _case(
        lambda p, uid: p.volume("p", projected={"sources": [{"secret": {"name": "s"}}]}),
        REFUSED + "secrets",
    ),
    "image-pull-secret": _case(
        lambda p, uid: p.set("spec.imagePullSecrets", [{"name": "s"}]), REFUSED + "secrets"
    ),
    "env-secret": _case(
        lambda p, uid: p.container(
            "c", env=[{"name": "E", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
        ),
        REFUSED + "secrets",
    ),
    "configmap-volume": _case(
        lambda p, uid: p.volume("c", configMap={"name": "c"}), REFUSED + "configmaps"
    ),
    "envfrom-configmap": _case(
        lambda p, uid: p.container("c", envFrom=[{"configMapRef": {"name": "c"}}]),
        REFUSED + "configmaps",
    ),
    "persistent-volume-claim": _case(
        lambda p, uid: p.volume("d", persistentVolumeClaim={"claimName": "d"}),
        REFUSED + "persistentvolumeclaims",
    ),
    "resource-claim": _case(lambda p, uid: p.claim_ref("gpu", "c"), REFUSED + "resourceclaims"),
}


@pytest.mark.parametrize("case", [pytest.param(c, id=k) for k, c in MIRROR_CASES.items()])
async def test_node_creates_mirror_pod(
    cluster: Cluster, case: MirrorCase, request: pytest.FixtureRequest
) -> None:
    name = request.node.callspec.id
    pod = _mirror(name, cluster.node_uid, case.shape)

    code, body = await _post(cluster, "/api/v1/namespaces/team/pods", pod)

    if not case.message:
        assert code == 201, body
        return
    assert code == case.code, body
    message = case.message.format(uid=cluster.node_uid)
    assert body["message"] == f'pods "{name}" is forbidden: {message}'
    stored = await cluster.server.storage.get(kinds.PODS.key, "team", name)
    assert stored is None


# --- TokenRequests --------------------------------------------------------------------------


def _token_request(ref: Obj | None) -> Obj:
    spec: Obj = {"audiences": ["api"]}
    if ref is not None:
        spec["boundObjectRef"] = ref
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}


def _pod_ref(name: str, uid: str | None) -> Obj:
    ref = {"apiVersion": "v1", "kind": "Pod", "name": name}
    return ref if uid is None else {**ref, "uid": uid}


TOKEN_PATH = "/api/v1/namespaces/team/serviceaccounts/default/token"
FORBIDDEN = 'serviceaccounts "default" is forbidden: '


@pytest.mark.parametrize(
    ("ref", "code", "message"),
    [
        pytest.param(None, 403, FORBIDDEN + "node requested token not bound to a pod", id="none"),
        pytest.param(
            {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u"},
            403,
            FORBIDDEN + "node requested token not bound to a pod",
            id="bound-to-secret",
        ),
        pytest.param(
            _pod_ref("pod-0", None),
            403,
            FORBIDDEN + "node requested token with a pod binding without a uid",
            id="no-uid",
        ),
        pytest.param(
            _pod_ref("pod-0", "stale"),
            403,
            FORBIDDEN + "the UID in the bound object reference (stale) does not match the UID "
            "in record. The object might have been deleted and then recreated",
            id="stale-uid",
        ),
        pytest.param(
            _pod_ref("pod-1", "pod-1"),
            403,
            FORBIDDEN + "node requested token bound to a pod scheduled on a different node",
            id="pod-on-other-node",
        ),
        pytest.param(_pod_ref("gone", "u"), 404, 'pods "gone" not found', id="missing-pod"),
        pytest.param(_pod_ref("pod-0", "pod-0"), 201, "", id="own-pod"),
    ],
)
async def test_node_requests_token(
    cluster: Cluster, ref: Obj | None, code: int, message: str
) -> None:
    if ref is not None and ref.get("uid") in cluster.pod_uids:
        ref = {**ref, "uid": cluster.pod_uids[ref["uid"]]}

    status, body = await _post(cluster, TOKEN_PATH, _token_request(ref))

    assert status == code, body
    if message:
        assert body["message"] == message
    else:
        assert body["status"]["token"]
