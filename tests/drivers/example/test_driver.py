"""ExampleDriver against a real in-process API: parameters from ConfigMaps, the allocation
result (env values, devices, node), shareable claims, rebuilding state after a restart."""

from __future__ import annotations

import random

import orjson
import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.dra.controller import ClaimAllocation
from draplane.drivers.example import DRIVER_NAME, ExampleDriver, ParametersError, Resources
from draplane.testing.apistate import seed_objects
from draplane.testing.builders import make_claim, make_class, make_node, make_pod
from draplane.testing.cluster import Cluster


def config_map(name: str, **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    }


async def item_for(driver: ExampleDriver, claim: Obj, *, resource_class: Obj) -> ClaimAllocation:
    class_parameters = await driver.get_class_parameters(resource_class)
    claim_parameters = await driver.get_claim_parameters(
        claim, resource_class=resource_class, class_parameters=class_parameters
    )
    return ClaimAllocation(
        pod_claim_name="gpu",
        claim=claim,
        resource_class=resource_class,
        claim_parameters=claim_parameters,
        class_parameters=class_parameters,
    )


def handle_data(item: ClaimAllocation) -> Obj:
    assert item.allocation is not None
    [handle] = item.allocation["resourceHandles"]
    assert handle["driverName"] == DRIVER_NAME
    data: Obj = orjson.loads(handle["data"])
    return data


async def test_parameters_become_env_values(cluster: Cluster) -> None:
    client = cluster.client()
    _, _, resource_class, claim = await seed_objects(
        client,
        config_map("admin-params", Mode="fast"),
        config_map("user-params", Size="Large", shareable="true"),
        make_class().parameters("admin-params").obj(),
        make_claim().parameters("user-params").obj(),
    )
    driver = ExampleDriver(client)
    item = await item_for(driver, claim, resource_class=resource_class)
    await driver.allocate([item], selected_node="node-1")
    assert item.error is None
    assert handle_data(item) == {
        "EnvVars": {"user_size": "Large", "user_shareable": "true", "admin_mode": "fast"},
        "NodeName": "node-1",
        "Devices": ["dev-0"],
    }
    assert item.allocation is not None
    assert item.allocation["shareable"] is True
    assert item.allocation["availableOnNodes"] == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}
                ]
            }
        ]
    }


@pytest.mark.parametrize(
    ("class_ref", "claim_ref", "message"),
    [
        pytest.param(
            {"name": "p", "kind": "Foo", "apiGroup": "example.com", "namespace": "default"},
            None,
            "class parameters are only supported in APIVersion v1, Kind ConfigMap or APIVersion "
            "driver.example.com/v1alpha1, Kind ClassParameters, got: "
            '{"name":"p","kind":"Foo","apiGroup":"example.com","namespace":"default"}',
            id="class-parameters-wrong-kind",
        ),
        pytest.param(
            None,
            {"name": "p", "kind": "Secret"},
            "claim parameters are only supported in APIVersion v1, Kind ConfigMap or APIVersion "
            "driver.example.com/v1alpha1, Kind ClaimParameters, got: "
            '{"name":"p","kind":"Secret"}',
            id="claim-parameters-wrong-kind",
        ),
        pytest.param(
            None,
            {"name": "missing", "kind": "ConfigMap"},
            'configmaps "missing" not found',
            id="claim-parameters-missing",
        ),
    ],
)
async def test_parameter_errors(
    cluster: Cluster, class_ref: Obj | None, claim_ref: Obj | None, message: str
) -> None:
    resource_class = (
        make_class().set("parametersRef", class_ref).obj() if class_ref else (make_class().obj())
    )
    claim = (
        make_claim().set("spec.parametersRef", claim_ref).obj()
        if claim_ref
        else (make_claim().obj())
    )
    driver = ExampleDriver(cluster.client())
    with pytest.raises(Exception) as raised:
        await item_for(driver, claim, resource_class=resource_class)
    assert str(raised.value) == message
    if "Kind ConfigMap" in message:
        assert isinstance(raised.value, ParametersError)


@pytest.mark.parametrize(
    ("resources", "class_params", "shareable"),
    [
        pytest.param(Resources(), {}, False, id="exclusive-by-default"),
        pytest.param(Resources(shareable=True), {}, True, id="driver-flag"),
        pytest.param(Resources(), {"shareable": "true"}, True, id="class-parameter"),
    ],
)
async def test_shareable(
    cluster: Cluster, resources: Resources, class_params: dict[str, str], shareable: bool
) -> None:
    client = cluster.client()
    _, resource_class, claim = await seed_objects(
        client,
        config_map("cp", **class_params),
        make_class().parameters("cp").obj(),
        make_claim().obj(),
    )
    driver = ExampleDriver(client, resources=resources)
    item = await item_for(driver, claim, resource_class=resource_class)
    await driver.allocate([item], selected_node="node-0")
    assert item.allocation is not None
    assert item.allocation["shareable"] is shareable


async def test_network_attached_allocation_has_no_node(cluster: Cluster) -> None:
    client = cluster.client()
    _, claim_a, claim_b = await seed_objects(
        client, make_class().obj(), make_claim("a").obj(), make_claim("b").obj()
    )
    driver = ExampleDriver(client, resources=Resources(network_attached=1))
    first = await item_for(driver, claim_a, resource_class=make_class().obj())
    second = await item_for(driver, claim_b, resource_class=make_class().obj())
    await driver.allocate([first, second], selected_node="node-3")
    assert handle_data(first)["NodeName"] == ""
    assert first.allocation is not None
    assert "availableOnNodes" not in first.allocation
    assert second.error == (
        f"failed allocating claim {meta.uid(claim_b)}: resources exhausted in the cluster"
    )


async def test_immediate_node_local_allocation_uses_the_registered_nodes(
    cluster: Cluster,
) -> None:
    client = cluster.client()
    _, claim = await seed_objects(client, make_node("only-node").obj(), make_claim().obj())
    driver = ExampleDriver(client, rng=random.Random(3))
    item = await item_for(driver, claim, resource_class=make_class().obj())
    await driver.allocate([item], selected_node=None)
    assert handle_data(item)["NodeName"] == "only-node"


async def allocate_on(client: Client, driver: ExampleDriver, *, name: str, node: str) -> Obj:
    """Allocate claim `name` for `node` and record the result in the API, as the framework does."""
    [claim] = await seed_objects(client, make_claim(name).obj())
    item = await item_for(driver, claim, resource_class=make_class().obj())
    await driver.allocate([item], selected_node=node)
    stored = meta.deep_copy(claim)
    stored["status"] = {"allocation": item.allocation, "driverName": DRIVER_NAME}
    return await client.update(kinds.RESOURCE_CLAIMS, stored, subresource="status")


async def test_restart_rebuilds_allocations_from_claims(cluster: Cluster) -> None:
    client = cluster.client()
    resources = Resources(devices_per_node=2)
    before = ExampleDriver(client, resources=resources)
    await allocate_on(client, before, name="a", node="node-0")
    await allocate_on(client, before, name="b", node="node-1")

    after = ExampleDriver(client, resources=resources)
    [pending] = await seed_objects(client, make_claim("c").obj())
    item = await item_for(after, pending, resource_class=make_class().obj())
    await after.unsuitable_nodes(
        make_pod().obj(), claims=[item, item], potential_nodes=["node-0", "node-1", "node-2"]
    )
    # One device is taken on node-0 and node-1 each, so a pod needing two fits only node-2.
    assert item.unsuitable_nodes == ["node-0", "node-1"]
    await after.allocate([item], selected_node="node-0")
    assert handle_data(item)["Devices"] == ["dev-1"]
    assert after.allocator.allocations == 1

    a = await client.get(kinds.RESOURCE_CLAIMS, "a", "default")
    await after.deallocate(a)
    assert after.allocator.deallocations == 1
    assert sorted(after.allocator.grants) == sorted(
        [meta.uid(await client.get(kinds.RESOURCE_CLAIMS, n, "default")) for n in ("b", "c")]
    )
