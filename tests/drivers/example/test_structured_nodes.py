"""The example driver in structured mode over a real in-process 1.36 cluster: simulated nodes
publish their ResourceSlices, the publisher's generation rules, the network-attached pool, and
a pod whose claim is allocated (the test plays the scheduler) prepared and started on its node
with CDI devices, config env in its log and `status.devices` on the claim."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import kinds, meta, versions
from draplane.api.meta import Obj
from draplane.apiserver import containerlogs
from draplane.client.interface import Client
from draplane.dra.kubeletplugin import NodePluginRegistry
from draplane.drivers.example import (
    DEVICE_CLASS_NAME,
    DRIVER_NAME,
    NETWORK_POOL,
    DeviceProfile,
    SlicePublisher,
    StructuredNodePlugin,
    device_class,
    network_slice_specs,
    node_slice_specs,
    publish_network_pool,
    structured_node_plugin_factory,
)
from draplane.node import Nodes
from draplane.testing.allocatorcases import allocation
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster
from draplane.testing.structured import device_result, make_structured_claim


@dataclass
class Env:
    cluster: Cluster
    admin: Client
    clock: FakeClock

    async def slices(self) -> list[Obj]:
        items = (await self.admin.list(kinds.RESOURCE_SLICES)).get("items") or []
        return sorted(items, key=meta.name)


@pytest.fixture
def cluster_options(clock: FakeClock) -> dict[str, Any]:
    return {"clock": clock, "mode": versions.STRUCTURED}


@pytest.fixture
def env(cluster: Cluster, clock: FakeClock) -> Env:
    return Env(cluster, cluster.client(), clock)


def pool_of(slice_: Obj) -> Obj:
    return dict(slice_["spec"]["pool"])


@pytest.mark.parametrize(
    ("profiles", "generation", "slices"),
    [
        pytest.param([DeviceProfile(count=2)], 1, 1, id="first-publish-generation-1"),
        pytest.param([DeviceProfile(count=2)] * 2, 1, 1, id="unchanged"),
        pytest.param(
            [DeviceProfile(count=2), DeviceProfile(count=3)], 1, 1, id="one-slice-changed"
        ),
        pytest.param(
            [DeviceProfile(count=2), DeviceProfile(count=2, partitions=2)],
            2,
            2,
            id="new-slice-bumps",
        ),
        pytest.param(
            [DeviceProfile(count=130), DeviceProfile(count=140)],
            1,
            2,
            id="second-slice-changed",
        ),
        pytest.param(
            [DeviceProfile(count=130), DeviceProfile(count=130, model="H100")],
            2,
            2,
            id="two-changed-bump",
        ),
    ],
)
async def test_publisher_generation(
    env: Env, profiles: list[DeviceProfile], generation: int, slices: int
) -> None:
    node = (await env.admin.create(kinds.NODES, {"metadata": {"name": "node-0"}})) or {}
    publisher = SlicePublisher(
        env.admin, driver_name=DRIVER_NAME, pool="node-0", node_name="node-0", owner=node
    )
    for profile in profiles:
        await publisher.publish(node_slice_specs(DRIVER_NAME, "node-0", profile))
    stored = await env.slices()
    assert [pool_of(s) for s in stored] == [
        {"name": "node-0", "generation": generation, "resourceSliceCount": slices}
    ] * slices
    assert [meta.name(s)[: len(f"{i:x}-{DRIVER_NAME}-node-0-")] for i, s in enumerate(stored)] == [
        f"{i:x}-{DRIVER_NAME}-node-0-" for i in range(slices)
    ]
    assert all(s["metadata"]["ownerReferences"][0]["uid"] == meta.uid(node) for s in stored)
    devices = [d for s in stored for d in s["spec"].get("devices") or []]
    assert len(devices) == profiles[-1].count * (1 + profiles[-1].partitions)
    assert await publisher.remove() == slices
    assert await env.slices() == []


@pytest.mark.parametrize(
    ("node_selector", "expected"),
    [
        pytest.param(None, {"allNodes": True}, id="all-nodes"),
        pytest.param(
            {"nodeSelectorTerms": [{"matchLabels": {}, "matchExpressions": []}]},
            None,
            id="node-selector",
        ),
    ],
)
async def test_network_attached_pool(
    env: Env, node_selector: Obj | None, expected: Obj | None
) -> None:
    selector = (
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}
        if node_selector
        else None
    )
    await publish_network_pool(env.admin, DeviceProfile(count=4), node_selector=selector)
    [stored] = await env.slices()
    spec = stored["spec"]
    assert pool_of(stored) == {"name": NETWORK_POOL, "generation": 1, "resourceSliceCount": 1}
    assert "nodeName" not in spec
    if expected is not None:
        assert spec["allNodes"] is True
    else:
        assert spec["nodeSelector"] == selector
    assert [d["name"] for d in spec["devices"]] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    assert spec == {
        **network_slice_specs(DRIVER_NAME, DeviceProfile(count=4), node_selector=selector)[0],
        "pool": spec["pool"],
    }


async def test_nodes_publish_prepare_and_run(env: Env) -> None:
    plugins = NodePluginRegistry()
    plugins.register(
        DRIVER_NAME, structured_node_plugin_factory(DRIVER_NAME, DeviceProfile(count=2))
    )
    nodes = Nodes(
        lambda _name: env.admin,
        count=2,
        plugins=plugins,
        clock=env.clock,
        claims=kinds.RESOURCE_CLAIMS_V1,
    )
    task = asyncio.create_task(nodes.run())
    try:

        async def synced() -> bool:
            return nodes.has_synced()

        await wait_for(synced, what="nodes synced")
        stored = await env.slices()
        assert sorted(s["spec"]["nodeName"] for s in stored) == ["node-0", "node-1"]
        assert all(pool_of(s)["name"] == s["spec"]["nodeName"] for s in stored)
        node0 = await env.admin.get(kinds.NODES, "node-0")
        [owner] = next(s for s in stored if s["spec"]["nodeName"] == "node-0")["metadata"][
            "ownerReferences"
        ]
        assert (owner["kind"], owner["uid"]) == ("Node", meta.uid(node0))

        await env.admin.create(kinds.DEVICE_CLASSES, device_class(DRIVER_NAME))
        pod = await env.admin.create(
            kinds.PODS,
            make_pod("gpu-pod").claim_ref("gpu", "my-gpu", mode=versions.STRUCTURED).obj(),
            "default",
        )
        claim = await env.admin.create(
            kinds.RESOURCE_CLAIMS_V1,
            make_structured_claim("my-gpu").request("gpu", DEVICE_CLASS_NAME).obj(),
            "default",
        )
        claim = meta.deep_copy(claim)
        config = {
            "source": "FromClaim",
            "requests": ["gpu"],
            "opaque": {"driver": DRIVER_NAME, "parameters": {"mode": "exclusive"}},
        }
        claim["status"] = {
            "allocation": allocation(
                device_result("gpu", "gpu-1", pool="node-0"), node="node-0", config=[config]
            ),
            "reservedFor": [{"resource": "pods", "name": "gpu-pod", "uid": meta.uid(pod)}],
        }
        await env.admin.update(kinds.RESOURCE_CLAIMS_V1, claim, subresource="status")
        await env.admin.create(
            kinds.PODS,
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": "gpu-pod", "namespace": "default"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": "node-0"},
            },
            "default",
            subresource="binding",
            name="gpu-pod",
        )

        async def running() -> bool:
            got = await env.admin.get(kinds.PODS, "gpu-pod", "default")
            return (got.get("status") or {}).get("phase") == "Running"

        await wait_for(running, what="pod running")
        plugin = plugins.plugin(DRIVER_NAME, "node-0")
        assert isinstance(plugin, StructuredNodePlugin)
        [prepared] = plugin.prepared.values()
        assert [d.cdi_device_ids for d in prepared] == [(f"{DRIVER_NAME}/gpu=gpu-1",)]
        stored_claim = await env.admin.get(kinds.RESOURCE_CLAIMS_V1, "my-gpu", "default")
        [entry] = stored_claim["status"]["devices"]
        assert (entry["driver"], entry["pool"], entry["device"]) == (DRIVER_NAME, "node-0", "gpu-1")
        assert entry["conditions"][0]["type"] == "Ready"
        assert entry["data"]["env"] == {"GPU_DEVICE_0": "gpu-1", "user_mode": "exclusive"}
        running_pod = await env.admin.get(kinds.PODS, "gpu-pod", "default")
        run = containerlogs.instance(running_pod, "ctr", previous=False)
        assert run is not None
        text = [
            line
            for _, line in containerlogs.lines(
                running_pod, "ctr", run, configmaps={}, claims={"my-gpu": stored_claim}
            )
        ]
        assert "user_mode=exclusive" in text
        assert f"draplane: claim my-gpu: device gpu-1 of driver {DRIVER_NAME}" in text

        # The devices change: the node's pool is republished (one slice changed: same generation).
        await plugin.set_profile(DeviceProfile(count=3))
        [slice0] = [s for s in await env.slices() if s["spec"]["nodeName"] == "node-0"]
        assert len(slice0["spec"]["devices"]) == 3
        assert pool_of(slice0)["generation"] == 1
        await plugin.stop()
        assert [s["spec"]["nodeName"] for s in await env.slices()] == ["node-1"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
