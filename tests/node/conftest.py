"""Simulated nodes over a real in-process cluster, with the example driver's node plugin and a
FakeClock; the test plays scheduler, claim controller and driver through the API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from draplane.api import kinds, meta
from draplane.api.auth import node_user
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.dra.controller import NodePluginRegistry
from draplane.drivers.example import DRIVER_NAME, ExampleNodePlugin, node_plugin_factory
from draplane.node import Nodes
from draplane.testing.apistate import wait_for
from draplane.testing.builders import ClaimBuilder
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster


@dataclass
class Env:
    cluster: Cluster
    admin: Client
    clock: FakeClock
    plugins: NodePluginRegistry
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    nodes: Nodes | None = None

    async def start_nodes(self, count: int = 2, *, run_seconds: float | None = None) -> Nodes:
        nodes = Nodes(
            lambda name: self.cluster.client(node_user(name)),
            count=count,
            plugins=self.plugins,
            clock=self.clock,
            run_seconds=run_seconds,
        )
        self.tasks.append(asyncio.create_task(nodes.run()))
        await wait_for(_synced(nodes), what="nodes synced")
        self.nodes = nodes
        return nodes

    async def stop_nodes(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()

    def plugin(self, node: str) -> ExampleNodePlugin:
        plugin = self.plugins.plugin(DRIVER_NAME, node)
        assert isinstance(plugin, ExampleNodePlugin)
        return plugin

    async def bind(self, pod: Obj, node: str) -> None:
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta.name(pod), "namespace": meta.namespace(pod)},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        await self.admin.create(
            kinds.PODS, binding, meta.namespace(pod), subresource="binding", name=meta.name(pod)
        )

    async def pod(self, name: str = "my-pod") -> Obj:
        return await self.admin.get(kinds.PODS, name, "default")


def _synced(nodes: Nodes) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return nodes.has_synced()

    return probe


def allocated(builder: ClaimBuilder, *, node: str | None, device: str = "dev-0") -> ClaimBuilder:
    data = {"EnvVars": {}, "NodeName": node or "", "Devices": [device]}
    return builder.allocation(node=node, data=orjson.dumps(data).decode())


@pytest.fixture
def cluster_options(clock: FakeClock) -> dict[str, Any]:
    return {"clock": clock}


@pytest.fixture
async def env(cluster: Cluster, clock: FakeClock) -> AsyncIterator[Env]:
    plugins = NodePluginRegistry()
    plugins.register(DRIVER_NAME, node_plugin_factory())
    started = Env(cluster, cluster.client(), clock, plugins)
    try:
        yield started
    finally:
        await started.stop_nodes()
