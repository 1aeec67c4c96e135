"""ExampleNodePlugin: CDI device names from the claim's allocation, idempotent per claim UID."""

from __future__ import annotations

import orjson
import pytest

from draplane.api.meta import Obj
from draplane.dra.controller import NodePluginRegistry
from draplane.drivers.example import (
    DRIVER_NAME,
    ExampleNodePlugin,
    PrepareError,
    node_plugin_factory,
)
from draplane.testing.builders import make_claim


def allocated_claim(*, node: str, devices: list[str], driver: str = DRIVER_NAME) -> Obj:
    data = orjson.dumps({"EnvVars": {"user_a": "b"}, "NodeName": node, "Devices": devices})
    return make_claim().allocation(driver=driver, node=node or None, data=data.decode()).obj()


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        pytest.param(
            allocated_claim(node="node-0", devices=["dev-3"]),
            ["driver.example.com/gpu=dev-3"],
            id="node-local",
        ),
        pytest.param(
            allocated_claim(node="", devices=["dev-0"]),
            ["driver.example.com/gpu=dev-0"],
            id="network-attached",
        ),
    ],
)
async def test_prepare_returns_cdi_devices(claim: Obj, expected: list[str]) -> None:
    plugin = ExampleNodePlugin(node_name="node-0")
    assert await plugin.prepare(claim) == expected
    assert await plugin.prepare(claim) == expected
    [prepared] = plugin.prepared.values()
    assert prepared.env == {"user_a": "b"}
    await plugin.unprepare(claim)
    await plugin.unprepare(claim)
    assert plugin.prepared == {}


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        pytest.param(
            allocated_claim(node="node-1", devices=["dev-0"]),
            "claim default/my-claim is allocated on node 'node-1', not 'node-0'",
            id="other-node",
        ),
        pytest.param(
            allocated_claim(node="node-0", devices=["dev-0"], driver="other"),
            "claim default/my-claim has no resource handle of driver.example.com",
            id="other-driver",
        ),
    ],
)
async def test_prepare_rejects(claim: Obj, message: str) -> None:
    plugin = ExampleNodePlugin(node_name="node-0")
    with pytest.raises(PrepareError) as raised:
        await plugin.prepare(claim)
    assert str(raised.value) == message
    assert plugin.prepared == {}


def test_registry_keeps_one_plugin_per_driver_and_node() -> None:
    registry = NodePluginRegistry()
    registry.register(DRIVER_NAME, node_plugin_factory())
    registry.register("driver2.example.com", node_plugin_factory("driver2.example.com"))
    first = registry.plugin(DRIVER_NAME, "node-0")
    assert first is registry.plugin(DRIVER_NAME, "node-0")
    assert first is not registry.plugin(DRIVER_NAME, "node-1")
    other = registry.plugin("driver2.example.com", "node-0")
    assert isinstance(other, ExampleNodePlugin)
    assert other.driver_name == "driver2.example.com"
    assert registry.plugin("unknown", "node-0") is None
    assert registry.driver_names == [DRIVER_NAME, "driver2.example.com"]
    with pytest.raises(ValueError):
        registry.register(DRIVER_NAME, node_plugin_factory())
