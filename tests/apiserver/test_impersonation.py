"""Impersonation headers through the real HTTPS path (upstream impersonation_test.go cases), the
review APIs' answers, and the audit log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.apiserver.audit import AuditLog
from draplane.testing.httpserver import HttpServer

SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
RBAC = "rbac.authorization.k8s.io"


@pytest.fixture
async def server(server: HttpServer, tmp_path: Path) -> HttpServer:
    server.registry.audit_log = AuditLog(tmp_path / "audit.log")
    admin = server.client()
    # "impersonator" may impersonate users and service accounts, not groups.
    await admin.create(
        kinds.CLUSTER_ROLES,
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "impersonate-users"},
            "rules": [
                {
                    "verbs": ["impersonate"],
                    "apiGroups": [""],
                    "resources": ["users", "serviceaccounts"],
                }
            ],
        },
    )
    await admin.create(
        kinds.CLUSTER_ROLE_BINDINGS,
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "impersonator"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "impersonate-users"},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "impersonator"}],
        },
    )
    return server


async def _post(
    server: HttpServer, path: str, body: Any, user: str, headers: list[tuple[str, str]]
) -> tuple[int, Any]:
    token = server.token(user, ("system:masters",) if user == "admin" else ())
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.ssl_context())) as session,
        session.post(
            server.url + path,
            data=orjson.dumps(body),
            headers=[
                ("Authorization", f"Bearer {token}"),
                ("Content-Type", "application/json"),
                *headers,
            ],
        ) as resp,
    ):
        return resp.status, orjson.loads(await resp.read())


WHOAMI = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


@pytest.mark.parametrize(
    ("who", "headers", "code", "want"),
    [
        pytest.param(
            "nobody",
            [("Impersonate-User", "anyone")],
            403,
            'users "anyone" is forbidden: User "nobody" cannot impersonate resource "users" in '
            'API group "" at the cluster scope',
            id="impersonating-error",
        ),
        pytest.param(
            "impersonator",
            [("Impersonate-Group", "devs")],
            500,
            "Internal error occurred: requested [group devs] without impersonating a user",
            id="impersonating-group-without-user",
        ),
        pytest.param(
            "impersonator",
            [("Impersonate-User", "alice"), ("Impersonate-Group", "devs")],
            403,
            'groups "devs" is forbidden: User "impersonator" cannot impersonate resource '
            '"groups" in API group "" at the cluster scope',
            id="disallowed-group",
        ),
        pytest.param(
            "impersonator",
            [("Impersonate-User", "system:serviceaccount:foo:default")],
            201,
            {
                "username": "system:serviceaccount:foo:default",
                "groups": [
                    "system:serviceaccounts",
                    "system:serviceaccounts:foo",
                    "system:authenticated",
                ],
            },
            id="allowed-sa-impersonating",
        ),
        pytest.param(
            "impersonator",
            [("Impersonate-User", "system:anonymous")],
            403,
            'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" '
            'cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at '
            "the cluster scope",
            id="anonymous-user-is-not-authenticated",
        ),
        pytest.param(
            "nobody",
            [],
            201,
            {"username": "nobody", "groups": ["system:authenticated"]},
            id="no-impersonation",
        ),
    ],
)
async def test_impersonation(
    server: HttpServer, who: str, headers: list[tuple[str, str]], code: int, want: Any
) -> None:
    got, body = await _post(server, SSR, WHOAMI, who, headers)

    assert got == code, body
    if code == 201:
        assert {k: body["status"]["userInfo"][k] for k in ("username", "groups")} == want
    else:
        assert body["message"] == want


@pytest.mark.parametrize(
    ("path", "spec", "allowed"),
    [
        pytest.param(
            SAR,
            {
                "user": "system:kube-scheduler",
                "resourceAttributes": {
                    "verb": "create",
                    "resource": "pods",
                    "subresource": "binding",
                    "namespace": "x",
                },
            },
            True,
            id="sar-scheduler-binds",
        ),
        pytest.param(
            SAR,
            {"user": "alice", "resourceAttributes": {"verb": "list", "resource": "pods"}},
            False,
            id="sar-alice-lists",
        ),
        pytest.param(
            SSAR,
            {
                "resourceAttributes": {
                    "verb": "create",
                    "resource": "selfsubjectreviews",
                    "group": "authentication.k8s.io",
                }
            },
            True,
            id="ssar-basic-user",
        ),
        pytest.param(
            SSAR,
            {"nonResourceAttributes": {"verb": "get", "path": "/metrics"}},
            False,
            id="ssar-metrics",
        ),
    ],
)
async def test_access_reviews(server: HttpServer, path: str, spec: Any, allowed: bool) -> None:
    kind = "SubjectAccessReview" if path == SAR else "SelfSubjectAccessReview"
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec}
    # SubjectAccessReview needs `create subjectaccessreviews` (admin); anyone may ask for self.
    asker = "nobody" if path == SSAR else "admin"
    code, answer = await _post(server, path, body, asker, [])

    assert code == 201, answer
    assert answer["status"]["allowed"] is allowed


async def test_review_validation_is_422_with_field_causes(server: HttpServer) -> None:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {},
    }
    code, answer = await _post(server, SSAR, body, "nobody", [])

    assert code == 422
    assert answer["details"]["causes"][0]["field"] == "spec.resourceAttributes"


async def test_audit_log_records_user_verb_object_and_code(
    server: HttpServer, tmp_path: Path
) -> None:
    await server.client().create(kinds.CONFIGMAPS, {"metadata": {"name": "audited"}}, "default")
    code, _ = await _post(
        server, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}}, "nobody", []
    )
    assert code == 403

    events = [orjson.loads(line) for line in (tmp_path / "audit.log").read_bytes().splitlines()]
    created = next(e for e in events if e["objectRef"].get("name") == "audited")
    denied = next(e for e in events if e["user"]["username"] == "nobody")
    assert (created["kind"], created["apiVersion"], created["stage"]) == (
        "Event",
        "audit.k8s.io/v1",
        "ResponseComplete",
    )
    assert (created["verb"], created["user"]["username"], created["responseStatus"]["code"]) == (
        "create",
        "admin",
        201,
    )
    assert created["objectRef"] == {
        "resource": "configmaps",
        "apiVersion": "v1",
        "namespace": "default",
        "name": "audited",
    }
    assert created["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert (denied["verb"], denied["responseStatus"]["code"]) == ("create", 403)
    assert denied["annotations"]["authorization.k8s.io/decision"] == "forbid"
