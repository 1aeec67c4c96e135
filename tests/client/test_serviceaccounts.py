"""`request_token` against a real in-process API server with RBAC: the service account is read
first and created only when missing (kube-controller-manager's getOrCreateServiceAccount), so a
user that may read accounts and request tokens but not create accounts gets its token while the
account exists, and a refused create is an error when it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.api import errors
from draplane.api.auth import UserInfo
from draplane.api.kinds import CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, SERVICE_ACCOUNTS
from draplane.apiserver.authentication import sakeys
from draplane.apiserver.authentication.satokens import TokenIssuer
from draplane.client.serviceaccounts import request_token
from draplane.testing.cluster import Cluster

NAMESPACE = "kube-system"
READER = UserInfo("token-reader", "", ("system:authenticated",))


@pytest.fixture
async def cluster(cluster: Cluster, tmp_path: Path) -> Cluster:
    """The cluster issuing service account tokens, with READER allowed to request them."""
    c = cluster
    c.registry.token_issuer = TokenIssuer(sakeys.load_or_create(tmp_path, "ES256"))
    admin = c.client()
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "token-reader"},
        "rules": [
            {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "token-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "token-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": READER.name}],
    }  # fmt: skip
    await admin.create(CLUSTER_ROLES, role)
    await admin.create(CLUSTER_ROLE_BINDINGS, binding)
    return c


async def test_existing_account_needs_no_create(cluster: Cluster) -> None:
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "ctrl"}}
    await cluster.client().create(SERVICE_ACCOUNTS, account, NAMESPACE)

    token = await request_token(cluster.client(READER), NAMESPACE, "ctrl")

    assert token.count(".") == 2  # a JWT


async def test_missing_account_is_created_by_a_user_allowed_to(cluster: Cluster) -> None:
    token = await request_token(cluster.client(), NAMESPACE, "new-ctrl")

    assert token
    stored = await cluster.client().get(SERVICE_ACCOUNTS, "new-ctrl", NAMESPACE)
    assert stored["metadata"]["name"] == "new-ctrl"


async def test_missing_account_and_no_create_right_is_forbidden(cluster: Cluster) -> None:
    with pytest.raises(errors.StatusError) as raised:
        await request_token(cluster.client(READER), NAMESPACE, "absent")

    assert raised.value.code == 403
    with pytest.raises(errors.StatusError) as missing:
        await cluster.client().get(SERVICE_ACCOUNTS, "absent", NAMESPACE)
    assert missing.value.code == 404
