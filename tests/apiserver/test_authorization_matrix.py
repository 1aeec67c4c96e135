"""The authorization matrix: identities x verbs x resources through the real HTTPS path.

Each row is one request by one identity against a cluster with the bootstrap policy, a namespace
`team` where alice is bound to `edit` and victor to `view`, one pod on each of node-0 and
node-1 with a claim, a config map and a secret, and an unbound pod with a secret. A row asserts
the request is allowed (any answer but 403) or denied (403 with the upstream message shape).
The node rows are upstream's node authorizer and NodeRestriction cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.api.auth import SYSTEM_MASTERS, SYSTEM_NODES
from draplane.api.request import resource_path
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.httpserver import HttpServer

# Slow: every row starts and seeds its own HTTPS API server (the RBAC decisions themselves are
# covered in-process by test_rbac_authorizer.py and test_rbac_requests.py).
pytestmark = pytest.mark.slow

SA_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:team")


@dataclass(frozen=True)
class Identity:
    user: str
    groups: tuple[str, ...] = ()


ADMIN = Identity("admin", (SYSTEM_MASTERS,))
NOBODY = Identity("nobody")
ALICE = Identity("alice")  # edit in team
VICTOR = Identity("victor")  # view in team
SCHEDULER = Identity("system:kube-scheduler")
CLAIM_CONTROLLER = Identity(
    "system:serviceaccount:kube-system:resource-claim-controller",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system"),
)
GC = Identity(
    "system:serviceaccount:kube-system:generic-garbage-collector",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system"),
)
NODE0 = Identity("system:node:node-0", (SYSTEM_NODES,))
NODE1 = Identity("system:node:node-1", (SYSTEM_NODES,))
NOT_A_NODE = Identity("system:node:node-0")
ROBOT = Identity("system:serviceaccount:team:robot", SA_GROUPS)  # no bindings


@dataclass(frozen=True)
class Row:
    who: Identity
    method: str
    path: str
    allowed: bool
    body: Any = None
    content_type: str = "application/json"


def _path(rt: kinds.ResourceType, ns: str = "", name: str = "", sub: str = "") -> str:
    return resource_path(rt, ns, name, sub)


POD_CLAIM = "claim-0"
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new"}}
POD = make_pod("new", "team").obj()
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
EV1 = kinds.EVENTS_V1
EVENT_V1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "new"}}


def _rows() -> list[Any]:
    pods, claims, secrets = kinds.PODS, kinds.RESOURCE_CLAIMS, kinds.SECRETS
    rows = [
        # admin (system:masters) may do everything
        ("admin-lists-pods", Row(ADMIN, "GET", _path(pods), True)),
        ("admin-deletes-claim", Row(ADMIN, "DELETE", _path(claims, "team", "nothing"), True)),
        # a user with no bindings
        ("nobody-lists-pods", Row(NOBODY, "GET", _path(pods, "team"), False)),
        ("nobody-creates-cm", Row(NOBODY, "POST", _path(kinds.CONFIGMAPS, "team"), False, CM)),
        ("nobody-gets-node", Row(NOBODY, "GET", _path(kinds.NODES, "", "node-0"), False)),
        ("nobody-discovery", Row(NOBODY, "GET", "/apis", True)),
        (
            "nobody-whoami",
            Row(
                NOBODY,
                "POST",
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                True,
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            ),
        ),
        # edit in team, nothing elsewhere
        ("edit-lists-pods", Row(ALICE, "GET", _path(pods, "team"), True)),
        ("edit-creates-pod", Row(ALICE, "POST", _path(pods, "team"), True, POD)),
        (
            "edit-creates-claim",
            Row(ALICE, "POST", _path(claims, "team"), True, make_claim("c2", "team").obj()),
        ),
        (
            "edit-lists-templates",
            Row(ALICE, "GET", _path(kinds.RESOURCE_CLAIM_TEMPLATES, "team"), True),
        ),
        ("edit-pods-other-ns", Row(ALICE, "GET", _path(pods, "default"), False)),
        (
            "edit-pod-status",
            Row(ALICE, "PATCH", _path(pods, "team", "pod-0", "status"), False, {}, MERGE),
        ),
        (
            "edit-claim-status",
            Row(ALICE, "PATCH", _path(claims, "team", POD_CLAIM, "status"), False, {}, MERGE),
        ),
        (
            "edit-binding",
            Row(
                ALICE,
                "POST",
                _path(pods, "team", "pod-0", "binding"),
                False,
                {"target": {"name": "node-0"}},
            ),
        ),
        ("edit-roles", Row(ALICE, "GET", _path(kinds.ROLES, "team"), False)),
        ("edit-classes", Row(ALICE, "GET", _path(kinds.RESOURCE_CLASSES), False)),
        ("edit-nodes", Row(ALICE, "GET", _path(kinds.NODES), False)),
        # a RoleBinding of view or edit in team grants reads of the Namespace team itself
        ("view-gets-namespace", Row(VICTOR, "GET", _path(kinds.NAMESPACES, "", "team"), True)),
        ("edit-gets-namespace", Row(ALICE, "GET", _path(kinds.NAMESPACES, "", "team"), True)),
        (
            "view-namespace-status",
            Row(VICTOR, "GET", _path(kinds.NAMESPACES, "", "team", "status"), True),
        ),
        (
            "view-gets-other-namespace",
            Row(VICTOR, "GET", _path(kinds.NAMESPACES, "", "default"), False),
        ),
        ("view-lists-namespaces", Row(VICTOR, "GET", _path(kinds.NAMESPACES), False)),
        (
            "view-lists-own-namespace-by-name",
            Row(
                VICTOR,
                "GET",
                _path(kinds.NAMESPACES) + "?fieldSelector=metadata.name%3Dteam",
                False,
            ),
        ),
        (
            "edit-deletes-namespace",
            Row(ALICE, "DELETE", _path(kinds.NAMESPACES, "", "team"), False),
        ),
        (
            "edit-patches-namespace",
            Row(ALICE, "PATCH", _path(kinds.NAMESPACES, "", "team"), False, {}, MERGE),
        ),
        # view in team
        ("view-gets-claim", Row(VICTOR, "GET", _path(claims, "team", POD_CLAIM), True)),
        ("view-claim-status", Row(VICTOR, "GET", _path(claims, "team", POD_CLAIM, "status"), True)),
        ("view-lists-pods", Row(VICTOR, "GET", _path(pods, "team"), True)),
        ("view-deletes-pod", Row(VICTOR, "DELETE", _path(pods, "team", "pod-0"), False)),
        ("view-configmaps", Row(VICTOR, "GET", _path(kinds.CONFIGMAPS, "team"), True)),
        ("view-psc", Row(VICTOR, "GET", _path(kinds.POD_SCHEDULING_CONTEXTS, "team"), False)),
        # the scheduler
        (
            "scheduler-binds",
            Row(
                SCHEDULER,
                "POST",
                _path(pods, "team", "pod-x", "binding"),
                True,
                {"target": {"name": "node-0"}},
            ),
        ),
        ("scheduler-lists-nodes", Row(SCHEDULER, "GET", _path(kinds.NODES), True)),
        (
            "scheduler-claim-status",
            Row(SCHEDULER, "PATCH", _path(claims, "team", POD_CLAIM, "status"), True, {}, MERGE),
        ),
        (
            "scheduler-creates-psc",
            Row(
                SCHEDULER,
                "POST",
                _path(kinds.POD_SCHEDULING_CONTEXTS, "team"),
                True,
                {
                    "apiVersion": "resource.k8s.io/v1alpha2",
                    "kind": "PodSchedulingContext",
                    "metadata": {"name": "pod-0"},
                    "spec": {},
                },
            ),
        ),
        ("scheduler-creates-pod", Row(SCHEDULER, "POST", _path(pods, "team"), False, POD)),
        ("scheduler-configmaps", Row(SCHEDULER, "GET", _path(kinds.CONFIGMAPS, "team"), False)),
        # events.k8s.io/v1: the new events broadcaster of kube-scheduler creates and patches
        ("scheduler-creates-event", Row(SCHEDULER, "POST", _path(EV1, "team"), True, EVENT_V1)),
        (
            "scheduler-patches-event",
            Row(SCHEDULER, "PATCH", _path(EV1, "team", "e"), True, {}, STRATEGIC),
        ),
        ("scheduler-updates-event", Row(SCHEDULER, "PUT", _path(EV1, "team", "e"), True, {})),
        ("scheduler-lists-events", Row(SCHEDULER, "GET", _path(EV1, "team"), False)),
        ("scheduler-deletes-event", Row(SCHEDULER, "DELETE", _path(EV1, "team", "e"), False)),
        ("view-core-events", Row(VICTOR, "GET", _path(kinds.EVENTS, "team"), True)),
        ("view-events-v1", Row(VICTOR, "GET", _path(EV1, "team"), False)),
        ("edit-creates-core-event", Row(ALICE, "POST", _path(kinds.EVENTS, "team"), True, {})),
        ("edit-creates-event-v1", Row(ALICE, "POST", _path(EV1, "team"), False, EVENT_V1)),
        # the claim controller
        (
            "claim-controller-creates-claim",
            Row(
                CLAIM_CONTROLLER,
                "POST",
                _path(claims, "team"),
                True,
                make_claim("c3", "team").obj(),
            ),
        ),
        (
            "claim-controller-pod-status",
            Row(CLAIM_CONTROLLER, "PATCH", _path(pods, "team", "pod-0", "status"), True, {}, MERGE),
        ),
        (
            "claim-controller-deletes-pod",
            Row(CLAIM_CONTROLLER, "DELETE", _path(pods, "team", "pod-0"), False),
        ),
        ("claim-controller-nodes", Row(CLAIM_CONTROLLER, "GET", _path(kinds.NODES), False)),
        # the garbage collector
        ("gc-deletes-claim", Row(GC, "DELETE", _path(claims, "team", "nothing"), True)),
        ("gc-creates-pod", Row(GC, "POST", _path(pods, "team"), False, POD)),
        # a service account without bindings
        ("sa-lists-pods", Row(ROBOT, "GET", _path(pods, "team"), False)),
        # nodes: the node authorizer (upstream TestAuthorizer and TestNodeAuthorizer)
        ("node-gets-own-claim", Row(NODE0, "GET", _path(claims, "team", POD_CLAIM), True)),
        ("node-gets-other-nodes-claim", Row(NODE0, "GET", _path(claims, "team", "claim-1"), False)),
        ("node-lists-claims", Row(NODE0, "GET", _path(claims, "team"), False)),
        ("node-claim-status", Row(NODE0, "GET", _path(claims, "team", POD_CLAIM, "status"), False)),
        (
            "node-gets-referenced-cm",
            Row(NODE0, "GET", _path(kinds.CONFIGMAPS, "team", "cm-0"), True),
        ),
        ("node-gets-other-cm", Row(NODE0, "GET", _path(kinds.CONFIGMAPS, "team", "cm-1"), False)),
        ("node-lists-cms", Row(NODE0, "GET", _path(kinds.CONFIGMAPS, "team"), False)),
        ("node-gets-own-pod", Row(NODE0, "GET", _path(pods, "team", "pod-0"), True)),
        ("node-gets-other-pod", Row(NODE0, "GET", _path(pods, "team", "pod-1"), False)),
        (
            "node-lists-own-pods",
            Row(NODE0, "GET", _path(pods) + "?fieldSelector=spec.nodeName%3Dnode-0", True),
        ),
        ("node-lists-all-pods", Row(NODE0, "GET", _path(pods), False)),
        ("node-pod-status-get", Row(NODE0, "GET", _path(pods, "team", "pod-0", "status"), False)),
        (
            "node-own-pod-status",
            Row(
                NODE0,
                "PATCH",
                _path(pods, "team", "pod-0", "status"),
                True,
                {"status": {"phase": "Running"}},
                MERGE,
            ),
        ),
        (
            "node-other-pod-status",
            Row(
                NODE0,
                "PATCH",
                _path(pods, "team", "pod-1", "status"),
                False,
                {"status": {"phase": "Running"}},
                MERGE,
            ),
        ),
        (
            "node-binds-pod",
            Row(
                NODE0,
                "POST",
                _path(pods, "team", "pod-x", "binding"),
                False,
                {"target": {"name": "node-0"}},
            ),
        ),
        ("node-creates-pod", Row(NODE0, "POST", _path(pods, "team"), False, POD)),
        (
            "node-relabels-own-pod",
            Row(
                NODE0,
                "PATCH",
                _path(pods, "team", "pod-0"),
                False,
                {"metadata": {"labels": {"x": "y"}}},
                MERGE,
            ),
        ),
        ("node-gets-own-node", Row(NODE0, "GET", _path(kinds.NODES, "", "node-0"), True)),
        ("node-gets-other-node", Row(NODE0, "GET", _path(kinds.NODES, "", "node-1"), False)),
        ("node-lists-nodes", Row(NODE0, "GET", _path(kinds.NODES), False)),
        (
            "node-other-node-status",
            Row(
                NODE0,
                "PATCH",
                _path(kinds.NODES, "", "node-1", "status"),
                False,
                {"status": {}},
                MERGE,
            ),
        ),
        (
            "node-restricted-label",
            Row(
                NODE0,
                "PATCH",
                _path(kinds.NODES, "", "node-0"),
                False,
                {"metadata": {"labels": {"node-restriction.kubernetes.io/x": "y"}}},
                MERGE,
            ),
        ),
        (
            "node-own-lease",
            Row(NODE0, "GET", _path(kinds.LEASES, "kube-node-lease", "node-0"), True),
        ),
        (
            "node-other-lease",
            Row(NODE0, "GET", _path(kinds.LEASES, "kube-node-lease", "node-1"), False),
        ),
        (
            "node-deletes-other-lease",
            Row(NODE0, "DELETE", _path(kinds.LEASES, "kube-node-lease", "node-1"), False),
        ),
        ("node-lease-elsewhere", Row(NODE0, "GET", _path(kinds.LEASES, "team", "node-0"), False)),
        (
            "node-creates-lease-elsewhere",
            Row(
                NODE0,
                "POST",
                _path(kinds.LEASES, "team"),
                False,
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": "node-0"},
                },
            ),
        ),
        (
            "node-templates",
            Row(NODE0, "GET", _path(kinds.RESOURCE_CLAIM_TEMPLATES, "team", "t"), False),
        ),
        (
            "node-psc",
            Row(NODE0, "GET", _path(kinds.POD_SCHEDULING_CONTEXTS, "team", "pod-0"), False),
        ),
        ("node-classes", Row(NODE0, "GET", _path(kinds.RESOURCE_CLASSES, "", "example"), False)),
        ("node-namespaces", Row(NODE0, "GET", _path(kinds.NAMESPACES, "", "team"), False)),
        (
            "node-creates-event",
            Row(
                NODE0,
                "POST",
                _path(kinds.EVENTS, "team"),
                True,
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"name": "e"},
                    "involvedObject": {"kind": "Pod", "name": "pod-0", "namespace": "team"},
                    "reason": "R",
                    "message": "m",
                },
            ),
        ),
        # secrets: only get (or a list/watch of one name) of those a pod bound to the node uses
        (
            "node-gets-bound-pods-secret",
            Row(NODE0, "GET", _path(secrets, "team", "secret-0"), True),
        ),
        (
            "node-gets-unbound-pods-secret",
            Row(NODE0, "GET", _path(secrets, "team", "secret-x"), False),
        ),
        (
            "node-gets-other-nodes-secret",
            Row(NODE0, "GET", _path(secrets, "team", "secret-1"), False),
        ),
        ("node-gets-unused-secret", Row(NODE0, "GET", _path(secrets, "team", "unused"), False)),
        (
            "node-1-gets-node-0-secret",
            Row(NODE1, "GET", _path(secrets, "team", "secret-0"), False),
        ),
        ("node-lists-secrets", Row(NODE0, "GET", _path(secrets, "team"), False)),
        ("node-lists-all-secrets", Row(NODE0, "GET", _path(secrets), False)),
        ("node-watches-secrets", Row(NODE0, "GET", _path(secrets, "team") + "?watch=true", False)),
        ("node-watches-all-secrets", Row(NODE0, "GET", _path(secrets) + "?watch=true", False)),
        (
            "node-lists-own-secret-by-name",
            Row(
                NODE0,
                "GET",
                _path(secrets, "team") + "?fieldSelector=metadata.name%3Dsecret-0",
                True,
            ),
        ),
        (
            "node-watches-other-secret-by-name",
            Row(
                NODE0,
                "GET",
                _path(secrets, "team") + "?watch=true&fieldSelector=metadata.name%3Dsecret-1",
                False,
            ),
        ),
        (
            "node-deletes-own-secret",
            Row(NODE0, "DELETE", _path(secrets, "team", "secret-0"), False),
        ),
        (
            "node-gets-own-pods-service-account",
            Row(NODE0, "GET", _path(kinds.SERVICE_ACCOUNTS, "team", "default"), True),
        ),
        (
            "node-gets-other-service-account",
            Row(NODE0, "GET", _path(kinds.SERVICE_ACCOUNTS, "team", "robot"), False),
        ),
        (
            "node-lists-service-accounts",
            Row(NODE0, "GET", _path(kinds.SERVICE_ACCOUNTS, "team"), False),
        ),
        ("node-1-gets-node-0-claim", Row(NODE1, "GET", _path(claims, "team", POD_CLAIM), False)),
        ("node-without-group", Row(NOT_A_NODE, "GET", _path(claims, "team", POD_CLAIM), False)),
    ]
    return [pytest.param(row, id=name) for name, row in rows]


async def _setup(server: HttpServer) -> None:
    admin = server.client()
    await admin.create(
        kinds.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    )
    for name in ("secret-0", "secret-1", "secret-x", "unused"):
        await admin.create(
            kinds.SECRETS,
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}},
            "team",
        )
    for i in (0, 1):
        await admin.create(
            kinds.CONFIGMAPS,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}},
            "team",
        )
        await admin.create(kinds.RESOURCE_CLAIMS, make_claim(f"claim-{i}", "team").obj())
        pod = make_pod(f"pod-{i}", "team").claim_ref("c", f"claim-{i}").node(f"node-{i}").obj()
        pod["spec"]["volumes"] = [
            {"name": "cm", "configMap": {"name": f"cm-{i}"}},
            {"name": "s", "secret": {"secretName": f"secret-{i}"}},
        ]
        await admin.create(kinds.PODS, pod)
        await admin.create(
            kinds.NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"}}
        )
        await admin.create(
            kinds.LEASES,
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": f"node-{i}"},
                "spec": {},
            },
            "kube-node-lease",
        )
    await admin.create(
        kinds.PODS, make_pod("pod-x", "team").volume("s", secret={"secretName": "secret-x"}).obj()
    )
    for user, role in (("alice", "edit"), ("victor", "view")):
        await admin.create(
            kinds.ROLE_BINDINGS,
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": f"{user}-{role}", "namespace": "team"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role,
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
                ],
            },
        )


@pytest.fixture
async def server(server: HttpServer) -> HttpServer:
    """The suite's API server, seeded by `_setup`."""
    await _setup(server)
    return server


async def _send(server: HttpServer, row: Row) -> tuple[int, Any]:
    token = server.token(row.who.user, row.who.groups)
    data = None if row.body is None else orjson.dumps(row.body)
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.ssl_context())) as session,
        session.request(
            row.method,
            server.url + row.path,
            data=data,
            headers={"Authorization": f"Bearer {token}", "Content-Type": row.content_type},
        ) as resp,
    ):
        return resp.status, orjson.loads(await resp.read())


@pytest.mark.parametrize("row", _rows())
async def test_authorization_matrix(server: HttpServer, row: Row) -> None:
    code, body = await _send(server, row)

    if row.allowed:
        assert code != 403, body
    else:
        assert code == 403, body
        assert body["reason"] == "Forbidden"
        assert "is forbidden" in body["message"] or body["message"].startswith("forbidden")
