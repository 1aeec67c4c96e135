"""The example kubelet plugin's credential over HTTPS: `status_clients` asks for a token of
`kube-system/driver.example.com-kubelet-plugin` bound to the Node, and with it the plugin may
write `status.devices` of a claim allocated on its own node only; on another node's claim (or
with a token bound to no node) the API server refuses with a 422 whose cause is a Forbidden
`status.devices`, as upstream's granular status authorization does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.client.kubeconfig import KubeConfig
from draplane.client.rest import RESTClient
from draplane.client.serviceaccounts import request_token
from draplane.drivers.example import DEVICE_CLASS_NAME, DRIVER_NAME, status_clients
from draplane.testing.allocatorcases import allocation
from draplane.testing.httpserver import HttpServer
from draplane.testing.structured import device_result, make_structured_claim

PLUGIN_USER = "system:serviceaccount:kube-system:driver.example.com-kubelet-plugin"


@pytest.fixture
def server_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


@dataclass
class Env:
    server: HttpServer
    admin: RESTClient
    nodes: dict[str, Obj]
    claim: Obj
    clients: list[RESTClient]

    def client_for_token(self, user: str, token: str) -> Client:
        base = self.server.kubeconfig()
        config = KubeConfig(server=base.server, user=user, token=token, ca_pem=base.ca_pem)
        client = RESTClient(config)
        self.clients.append(client)
        return client


@pytest.fixture
async def env(server: HttpServer) -> AsyncIterator[Env]:
    admin = server.client()
    nodes = {
        name: await admin.create(kinds.NODES, {"metadata": {"name": name}})
        for name in ("node-a", "node-b")
    }
    claim = await admin.create(
        kinds.RESOURCE_CLAIMS_V1,
        make_structured_claim("c").request("gpu", DEVICE_CLASS_NAME).obj(),
        "default",
    )
    claim = meta.deep_copy(claim)
    claim["status"] = {
        "allocation": allocation(device_result("gpu", "gpu-0", pool="node-a"), node="node-a")
    }
    scheduler = server.client("system:kube-scheduler")
    allocated = await scheduler.update(kinds.RESOURCE_CLAIMS_V1, claim, subresource="status")
    env = Env(server, admin, nodes, allocated, [])
    try:
        yield env
    finally:
        for client in env.clients:
            await client.close()


def _devices(claim: Obj) -> Obj:
    updated = meta.deep_copy(claim)
    updated["status"]["devices"] = [{"driver": DRIVER_NAME, "pool": "node-a", "device": "gpu-0"}]
    return updated


@pytest.mark.parametrize(
    ("bound_to", "code", "causes"),
    [
        pytest.param("node-a", 200, [], id="token-of-the-allocated-node"),
        pytest.param(
            "node-b", 422, [("FieldValueForbidden", "status.devices")], id="token-of-another-node"
        ),
        pytest.param(
            None, 422, [("FieldValueForbidden", "status.devices")], id="token-bound-to-no-node"
        ),
    ],
)
async def test_a_node_bound_plugin_token_writes_only_its_nodes_claims(
    env: Env, bound_to: str | None, code: int, causes: list[tuple[str, str]]
) -> None:
    if bound_to is None:
        token = await request_token(env.admin, "kube-system", "driver.example.com-kubelet-plugin")
        client = env.client_for_token(PLUGIN_USER, token)
    else:
        found = await status_clients(env.admin, env.client_for_token)(env.nodes[bound_to])
        assert found is not None
        client = found

    got, got_causes, message = 200, [], ""
    try:
        await client.update(kinds.RESOURCE_CLAIMS_V1, _devices(env.claim), subresource="status")
    except errors.StatusError as err:
        got, message = err.code, str(err.message)
        got_causes = [(c["reason"], c["field"]) for c in err.details["causes"]]

    stored = await env.admin.get(kinds.RESOURCE_CLAIMS_V1, "c", "default")
    assert (got, got_causes) == (code, causes)
    if code == 422:
        assert 'verb="[arbitrary-node:update]"' in message
        assert "devices" not in stored["status"]
    else:
        assert [d["device"] for d in stored["status"]["devices"]] == ["gpu-0"]
