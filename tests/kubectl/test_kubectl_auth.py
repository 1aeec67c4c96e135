"""kubectl 1.27 / 1.29 / 1.32 against RBAC, the review APIs, impersonation and service-account
tokens: `auth whoami`, `auth can-i` (yes/no, `--list`, `--as`), `create role`, `create
rolebinding`, `create clusterrolebinding`, `create token`, and a forbidden `get --as`."""

from __future__ import annotations

import pytest

from draplane.api import kinds
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)


@pytest.fixture
async def server(server: HttpServer) -> HttpServer:
    await server.client().create(
        kinds.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    )
    return server


async def test_whoami_shows_the_user_and_the_impersonated_user(kubectl: Kubectl) -> None:
    admin = await kubectl.run("auth", "whoami")
    impersonated = await kubectl.run("auth", "whoami", "--as", "alice", "--as-group", "devs")

    assert "admin" in admin and "system:masters" in admin
    assert "alice" in impersonated and "devs" in impersonated
    assert "system:authenticated" in impersonated and "system:masters" not in impersonated


async def test_can_i_follows_role_bindings_created_with_kubectl(kubectl: Kubectl) -> None:
    before = await kubectl.run(
        "auth", "can-i", "create", "pods", "--as", "alice", "-n", "team", check=False
    )
    await kubectl.run(
        "create", "role", "pod-writer", "--verb=create,get", "--resource=pods", "-n", "team"
    )
    await kubectl.run(
        "create", "rolebinding", "alice-pods", "--role=pod-writer", "--user=alice", "-n", "team"
    )
    after = await kubectl.run("auth", "can-i", "create", "pods", "--as", "alice", "-n", "team")
    elsewhere = await kubectl.run(
        "auth", "can-i", "create", "pods", "--as", "alice", "-n", "default", check=False
    )
    listing = await kubectl.run("auth", "can-i", "--list", "--as", "alice", "-n", "team")

    assert before.splitlines()[0] == "no"
    assert after.strip() == "yes"
    assert elsewhere.splitlines()[0] == "no"
    rows = [line.split() for line in listing.splitlines()]
    assert ["pods", "[]", "[]", "[create", "get]"] in rows
    assert any(row[0] == "selfsubjectreviews.authentication.k8s.io" for row in rows if row)


async def test_clusterrolebinding_to_view_grants_reads_everywhere(kubectl: Kubectl) -> None:
    await kubectl.run(
        "create", "clusterrolebinding", "bob-view", "--clusterrole=view", "--user=bob"
    )

    reads = await kubectl.run("auth", "can-i", "list", "resourceclaims", "--as", "bob", "-A")
    writes = await kubectl.run(
        "auth", "can-i", "delete", "pods", "--as", "bob", "-n", "team", check=False
    )

    assert reads.strip() == "yes"
    assert writes.splitlines()[0] == "no"


async def test_get_as_a_user_without_rights_is_forbidden(kubectl: Kubectl) -> None:
    out = await kubectl.run("get", "pods", "-n", "team", "--as", "mallory", check=False)

    assert (
        'Error from server (Forbidden): pods is forbidden: User "mallory" cannot list resource '
        '"pods" in API group "" in the namespace "team"'
    ) in out


async def test_create_token_authenticates_as_the_service_account(
    kubectl: Kubectl, server: HttpServer
) -> None:
    await kubectl.run("create", "serviceaccount", "robot", "-n", "team")

    token = (await kubectl.run("create", "token", "robot", "-n", "team")).strip()
    who = await kubectl.run("auth", "whoami", "--token", token)

    assert token.count(".") == 2
    assert "system:serviceaccount:team:robot" in who
    assert "system:serviceaccounts:team" in who
