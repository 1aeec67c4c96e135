"""`ConnectionPool` shared by the RESTClients of several users against a real HTTPS API server:
each request is authenticated as its own client's user, all of them go over the pool's
keep-alive connections, closing one client leaves the others working, and configs that cannot
share a pool are refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from draplane.api import errors, kinds
from draplane.apiserver import authn
from draplane.client.connpool import ConnectionPool
from draplane.client.kubeconfig import KubeConfig
from draplane.client.rest import RESTClient
from draplane.testing.builders import make_pod
from draplane.testing.httpserver import HttpServer

NODE_GROUPS = ("system:nodes", "system:authenticated")


def _as(server: HttpServer, user: str, groups: tuple[str, ...] | None = None) -> KubeConfig:
    base = server.kubeconfig()
    return KubeConfig(
        server=base.server, user=user, token=server.token(user, groups), ca_pem=base.ca_pem
    )


async def _whoami(client: RESTClient) -> str:
    review = await client.create(
        kinds.SELF_SUBJECT_REVIEWS,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    return str(review["status"]["userInfo"]["username"])


async def test_clients_of_several_users_share_connections_and_keep_their_identity(
    server: HttpServer,
) -> None:
    users = ["admin", "system:node:node-0", "system:node:node-1"]
    pool = ConnectionPool(_as(server, "admin"), shared=True)
    clients = [
        RESTClient(_as(server, user, None if user == "admin" else NODE_GROUPS), pool=pool)
        for user in users
    ]
    peers: set[tuple[str, int]] = set()
    try:
        for _ in range(3):
            for client, user in zip(clients, users, strict=True):
                assert await _whoami(client) == user
                peers.update(server.server.connection_peers)
        # The admin's credentials do not leak to the node over the shared connection.
        await clients[0].create(kinds.PODS, make_pod("by-admin").obj(), "default")
        with pytest.raises(errors.StatusError) as err:
            await clients[1].delete(kinds.PODS, "by-admin", "default")
        assert err.value.code == 403
    finally:
        for client in clients:
            await client.close()
        await pool.close()

    assert len(peers) == 1


async def test_closing_one_client_leaves_the_shared_pool_open(server: HttpServer) -> None:
    pool = ConnectionPool(_as(server, "admin"), shared=True)
    first = RESTClient(_as(server, "admin"), pool=pool)
    second = RESTClient(_as(server, "system:node:node-0", NODE_GROUPS), pool=pool)
    try:
        assert await _whoami(first) == "admin"
        await first.close()
        assert await _whoami(second) == "system:node:node-0"
    finally:
        await second.close()
        await pool.close()


def test_a_pool_is_shared_only_with_the_same_servers_and_trust(server: HttpServer) -> None:
    admin = _as(server, "admin")
    owned = ConnectionPool(admin)
    shared = ConnectionPool(admin, shared=True)
    with_cert = replace(admin, client_cert_pem=b"cert", client_key_pem=b"key")
    cases = [
        (owned, admin, "belongs to one transport"),
        (shared, with_cert, "client certificate"),
        (shared, replace(admin, server="https://127.0.0.1:1"), "servers and trust"),
        (shared, replace(admin, ca_pem=None, insecure=True), "servers and trust"),
    ]
    for pool, config, message in cases:
        with pytest.raises(ValueError, match=message):
            RESTClient(config, pool=pool)
    with pytest.raises(ValueError, match="cannot be shared"):
        ConnectionPool(with_cert, shared=True)
    assert RESTClient(replace(admin, user="other", token="t"), pool=shared).user == "other"


def test_ensure_user_tokens_adds_only_the_missing_users(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    first = authn.ensure_user_token(tmp_path, "system:node:a", NODE_GROUPS)
    tokens = authn.ensure_user_tokens(
        tmp_path, [("system:node:a", NODE_GROUPS), ("system:node:b", NODE_GROUPS), ("c", None)]
    )
    written = authn.token_file(tmp_path).stat().st_ino
    again = authn.ensure_user_tokens(tmp_path, [("c", None), ("system:node:b", NODE_GROUPS)])
    users = authn.parse_token_file(authn.token_file(tmp_path).read_text())

    assert tokens["system:node:a"] == first
    assert again == {"c": tokens["c"], "system:node:b": tokens["system:node:b"]}
    assert {info.name: info.groups for info in users.values()} == {
        "system:node:a": NODE_GROUPS,
        "system:node:b": NODE_GROUPS,
        "c": authn.default_groups("c"),
    }
    assert users[tokens["c"]].name == "c"
    # Every user known: the file is not replaced.
    assert authn.token_file(tmp_path).stat().st_ino == written
