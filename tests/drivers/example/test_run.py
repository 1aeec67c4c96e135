"""example_controller end to end with simulated nodes; the test plays the scheduler and claim
controller: two claims of one pod are negotiated jointly, allocated, prepared and run."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from draplane import dra
from draplane.api import kinds
from draplane.api.auth import driver_user, node_user
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.dra.controller import NodePluginRegistry
from draplane.drivers.example import DRIVER_NAME, Resources, example_controller, node_plugin_factory
from draplane.node import CLAIMS_PREPARED, Nodes
from draplane.testing.apistate import events_for, seed_objects, wait_for
from draplane.testing.builders import (
    make_claim,
    make_class,
    make_pod,
    make_scheduling_context as make_psc,
)
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster


@pytest.fixture
def cluster_options(clock: FakeClock) -> dict[str, Any]:
    return {"clock": clock}


async def test_pod_with_two_claims_runs_on_the_only_node_with_room(
    cluster: Cluster, clock: FakeClock
) -> None:
    admin = cluster.client()
    plugins = NodePluginRegistry()
    plugins.register(DRIVER_NAME, node_plugin_factory())
    controller = example_controller(
        cluster.client(driver_user(DRIVER_NAME)),
        resources=Resources(devices_per_node=2),
        clock=clock,
    )
    nodes = Nodes(lambda n: cluster.client(node_user(n)), count=2, plugins=plugins, clock=clock)
    tasks = [asyncio.create_task(controller.run()), asyncio.create_task(nodes.run())]
    try:
        # node-0 already holds one device, so a pod needing two fits only node-1.
        _, _, pod, _, _ = await seed_objects(
            admin,
            make_class().obj(),
            make_claim("busy").allocation_mode("Immediate").obj(),
            make_pod().claim_ref("a", "first").claim_ref("b", "second").obj(),
            make_claim("first").obj(),
            make_claim("second").obj(),
        )
        busy = await wait_for(lambda: _allocated(admin, "busy"), what="immediate allocation")
        busy_node = orjson.loads(busy["status"]["allocation"]["resourceHandles"][0]["data"])
        other = "node-1" if busy_node["NodeName"] == "node-0" else "node-0"
        await seed_objects(admin, make_psc(pod).potential_nodes("node-0", "node-1").obj())

        async def answered() -> list[Obj] | None:
            psc = await admin.get(kinds.POD_SCHEDULING_CONTEXTS, "my-pod", "default")
            entries: list[Obj] | None = (psc.get("status") or {}).get("resourceClaims")
            return entries

        assert await wait_for(answered, what="unsuitable nodes") == [
            {"name": "a", "unsuitableNodes": [busy_node["NodeName"]]},
            {"name": "b", "unsuitableNodes": [busy_node["NodeName"]]},
        ]
        psc = await admin.get(kinds.POD_SCHEDULING_CONTEXTS, "my-pod", "default")
        psc = {**psc, "spec": {**psc["spec"], "selectedNode": other}}
        await admin.update(kinds.POD_SCHEDULING_CONTEXTS, psc)
        for name in ("first", "second"):
            claim = await wait_for(lambda n=name: _allocated(admin, n), what=f"{name} allocated")
            assert claim["status"]["reservedFor"] == [dra.pod_reference(pod)]
        await admin.create(
            kinds.PODS,
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": "my-pod"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": other},
            },
            "default",
            subresource="binding",
            name="my-pod",
        )
        events = await wait_for(
            lambda: events_for(admin, pod, reason=CLAIMS_PREPARED), what="ClaimsPrepared"
        )
        assert events[0]["message"] == (
            "Prepared resource claims: first (driver.example.com/gpu=dev-0); "
            "second (driver.example.com/gpu=dev-1)"
        )
        running = await admin.get(kinds.PODS, "my-pod", "default")
        assert running["status"]["phase"] == "Running"
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _allocated(admin: Client, name: str) -> Obj | None:
    claim: Obj = await admin.get(kinds.RESOURCE_CLAIMS, name, "default")
    return claim if (claim.get("status") or {}).get("allocation") else None
