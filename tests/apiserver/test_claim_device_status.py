"""A claim's `status.devices` (DRAResourceClaimDeviceStatus) written by the driver under its own
identity: the example driver's kubelet plugin, a service account whose token is bound to the
allocated node, may write its driver's entries (`associated-node:update` on
`resourceclaims/driver`); a node identity is refused by the request's authorization (403), the
plugin on another node or for another driver's entries by the status check (422 Forbidden,
upstream's text); entries are validated (allocated device, networkData)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import errors, kinds, meta, versions
from draplane.api.auth import (
    RESOURCE_CLAIM_CONTROLLER,
    UserInfo,
    driver_plugin_user,
    node_user,
    service_account_groups,
)
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.drivers.example import (
    DEVICE_CLASS_NAME,
    DRIVER_NAME,
    NETWORK_POOL,
    StructuredNodePlugin,
)
from draplane.testing.allocatorcases import allocation
from draplane.testing.cluster import Cluster
from draplane.testing.structured import device_result, make_structured_claim

OTHER = "other.example.com"
ADMIN = UserInfo("admin", "", ("system:masters",))


@dataclass
class Env:
    cluster: Cluster
    admin: Client
    claim: Obj


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


@pytest.fixture
async def env(cluster: Cluster) -> Env:
    admin = cluster.client()
    claim = await admin.create(
        kinds.RESOURCE_CLAIMS_V1,
        make_structured_claim("c").request("gpu", DEVICE_CLASS_NAME).obj(),
        "default",
    )
    claim = meta.deep_copy(claim)
    claim["status"] = {
        "allocation": allocation(
            device_result("gpu", "gpu-0", pool="node-0"),
            device_result("gpu", "d0", driver=OTHER, pool="node-0"),
            device_result("gpu", "nic-0", pool=NETWORK_POOL),
            node="node-0",
        )
    }
    scheduler = cluster.client(UserInfo("system:kube-scheduler"))
    allocated = await scheduler.update(kinds.RESOURCE_CLAIMS_V1, claim, subresource="status")
    return Env(cluster, admin, allocated)


def _entry(device: str = "gpu-0", driver: str = DRIVER_NAME, **extra: object) -> Obj:
    pool = NETWORK_POOL if device.startswith("nic") else "node-0"
    return {"driver": driver, "pool": pool, "device": device, **extra}


DRIVER_ON_NODE = driver_plugin_user(DRIVER_NAME, "node-0")
DRIVER_DENIED = (
    'changing status.devices requires resource="resourceclaims/driver", '
    'verb="[{verbs}]" permission: resourceclaims.resource.k8s.io "{driver}" is forbidden: '
    'User "system:serviceaccount:kube-system:driver.example.com-kubelet-plugin" cannot '
    '{verb} resource "resourceclaims/driver" in API group "resource.k8s.io" in the namespace '
    '"default"'
)


@pytest.mark.parametrize(
    ("user", "entries", "code", "message"),
    [
        pytest.param(DRIVER_ON_NODE, [_entry()], 200, "", id="driver-on-allocated-node"),
        pytest.param(
            DRIVER_ON_NODE,
            [_entry(), _entry("nic-0", networkData={"ips": ["10.9.8.1/24"]})],
            200,
            "",
            id="driver-network-data",
        ),
        pytest.param(
            driver_plugin_user(DRIVER_NAME, "node-1"),
            [_entry()],
            422,
            DRIVER_DENIED.format(
                verbs="arbitrary-node:update", driver=DRIVER_NAME, verb="arbitrary-node:update"
            ),
            id="driver-on-another-node",
        ),
        pytest.param(
            DRIVER_ON_NODE,
            [_entry("d0", driver=OTHER)],
            422,
            DRIVER_DENIED.format(
                verbs="associated-node:update arbitrary-node:update",
                driver=OTHER,
                verb="associated-node:update",
            ),
            id="another-drivers-entries",
        ),
        pytest.param(
            node_user("node-0"),
            [_entry()],
            403,
            'resourceclaims.resource.k8s.io "c" is forbidden: User "system:node:node-0" cannot '
            'update resource "resourceclaims/status" in API group "resource.k8s.io" in the '
            'namespace "default"',
            id="node-identity",
        ),
        pytest.param(
            driver_plugin_user(OTHER, "node-0"),
            [_entry("d0", driver=OTHER)],
            403,
            'User "system:serviceaccount:kube-system:other.example.com-kubelet-plugin" cannot '
            'update resource "resourceclaims/status"',
            id="unknown-driver-identity",
        ),
        pytest.param(
            DRIVER_ON_NODE,
            [_entry("gpu-7")],
            422,
            "must be an allocated device in the claim",
            id="not-allocated",
        ),
        pytest.param(
            DRIVER_ON_NODE,
            [_entry("nic-0", networkData={"ips": ["2001:0db8::1/64"]})],
            422,
            'must be in canonical form ("2001:db8::1/64")',
            id="non-canonical-ip",
        ),
        pytest.param(
            DRIVER_ON_NODE,
            [_entry(), _entry()],
            422,
            "Duplicate value",
            id="duplicate",
        ),
    ],
)
async def test_who_may_write_device_status(
    env: Env, user: UserInfo, entries: list[Obj], code: int, message: str
) -> None:
    client = env.cluster.client(user)
    claim = meta.deep_copy(env.claim)
    claim["status"]["devices"] = entries

    got = 200
    text = ""
    try:
        await client.update(kinds.RESOURCE_CLAIMS_V1, claim, subresource="status")
    except errors.StatusError as err:
        got, text = err.code, str(err.message)
        if err.code == 422:
            text = " ".join(c["message"] for c in err.details["causes"])

    stored = await env.admin.get(kinds.RESOURCE_CLAIMS_V1, "c", "default")
    assert got == code
    assert message in text
    assert stored["status"].get("devices") == (entries if code == 200 else None)


@pytest.mark.parametrize(
    ("status_user", "written"),
    [
        pytest.param(DRIVER_ON_NODE, True, id="driver-identity"),
        pytest.param(node_user("node-0"), False, id="node-identity"),
    ],
)
async def test_the_example_plugin_writes_status_devices_as_the_driver(
    env: Env, status_user: UserInfo, written: bool
) -> None:
    node = await env.admin.create(kinds.NODES, {"metadata": {"name": "node-0"}})
    plugin = StructuredNodePlugin("node-0", status_client=env.cluster.client(status_user))
    await plugin.start(env.cluster.client(node_user("node-0")), node)

    cdi = await plugin.prepare(env.claim)

    stored = await env.admin.get(kinds.RESOURCE_CLAIMS_V1, "c", "default")
    devices = stored["status"].get("devices") or []
    assert cdi == [f"{DRIVER_NAME}/gpu=gpu-0", f"{DRIVER_NAME}/gpu=nic-0"]
    assert plugin.write_device_status is written
    if written:
        assert [(d["device"], d["conditions"][0]["type"]) for d in devices] == [
            ("gpu-0", "Ready"),
            ("nic-0", "Ready"),
        ]
        assert "networkData" not in devices[0]
        assert devices[1]["networkData"]["interfaceName"] == "net-nic-0"
    else:
        assert devices == []


async def test_deallocation_drops_the_device_status(env: Env) -> None:
    """The claim controller clears `allocation` only; the server drops the stale entries
    (dropDeallocatedStatusDevices), which is not a driver's write."""
    plugin = env.cluster.client(DRIVER_ON_NODE)
    claim = meta.deep_copy(env.claim)
    claim["status"]["devices"] = [_entry(), _entry("nic-0")]
    written = await plugin.update(kinds.RESOURCE_CLAIMS_V1, claim, subresource="status")
    controller = env.cluster.client(
        UserInfo(RESOURCE_CLAIM_CONTROLLER, "", service_account_groups("kube-system"))
    )

    # A client unaware of device status sends the entries back unchanged.
    unaware = {**written, "status": {"devices": written["status"]["devices"]}}
    cleared = await controller.update(kinds.RESOURCE_CLAIMS_V1, unaware, subresource="status")

    assert len(written["status"]["devices"]) == 2
    assert cleared["status"] == {}
