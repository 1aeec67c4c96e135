"""A kubelet directory with one simulated node over a real in-process 1.36 cluster, and a test
driver built on `draplane.kubeletplugin` registered over real gRPC on Unix sockets: the
fixtures of the kubelet-plugin tests. The test plays the scheduler (allocates and reserves)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from draplane.api import kinds, meta, versions
from draplane.api.auth import node_user
from draplane.api.meta import Obj
from draplane.clock import REAL_CLOCK
from draplane.dra.kubeletplugin import NodePluginRegistry
from draplane.kubeletplugin import Device, Helper, NamespacedObject, PrepareResult
from draplane.node import Nodes
from draplane.testing.allocatorcases import allocation
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod
from draplane.testing.cluster import Cluster, start_cluster
from draplane.testing.structured import device_result, make_structured_claim

DRIVER = "test.example.com"
NODE = "node-0"


@dataclass
class FakeDriver:
    """Prepares from the allocation: a CDI spec per claim whose devices inject `env`."""

    helper: Helper | None = None
    env: dict[str, str] = field(default_factory=lambda: {"TEST_VAR": "hello"})
    fail: str = ""
    driver_name: str = DRIVER
    prepared: list[list[tuple[str, str, str]]] = field(default_factory=list)
    unprepared: list[list[str]] = field(default_factory=list)

    async def prepare_resource_claims(self, claims: list[Obj]) -> dict[str, PrepareResult]:
        self.prepared.append([(meta.namespace(c), meta.name(c), meta.uid(c)) for c in claims])
        assert self.helper is not None
        out: dict[str, PrepareResult] = {}
        for claim in claims:
            if self.fail:
                out[meta.uid(claim)] = PrepareResult(error=self.fail)
                continue
            results = [
                r
                for r in claim["status"]["allocation"]["devices"]["results"]
                if r["driver"] == self.driver_name
            ]
            ids = self.helper.cdi.write_claim(
                meta.uid(claim), {r["device"]: {**self.env, "DEVICE": r["device"]} for r in results}
            )
            out[meta.uid(claim)] = PrepareResult(
                devices=tuple(
                    Device(r["pool"], r["device"], (r["request"],), (ids[r["device"]],))
                    for r in results
                )
            )
        return out

    async def unprepare_resource_claims(self, claims: list[NamespacedObject]) -> dict[str, str]:
        self.unprepared.append([c.uid for c in claims])
        assert self.helper is not None
        for claim in claims:
            self.helper.cdi.remove_claim(claim.uid)
        return {c.uid: "" for c in claims}


@dataclass
class Env:
    cluster: Cluster
    kubelet_dir: Path
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    helpers: list[Helper] = field(default_factory=list)
    nodes: Nodes | None = None

    @property
    def admin(self):  # type: ignore[no-untyped-def]
        return self.cluster.client()

    async def start_nodes(self, *, slice_wipe_delay: float = 30.0) -> Nodes:
        nodes = Nodes(
            lambda name: self.cluster.client(node_user(name)),
            count=1,
            plugins=NodePluginRegistry(),
            clock=REAL_CLOCK,
            claims=kinds.RESOURCE_CLAIMS_V1,
            kubelet_dir=self.kubelet_dir,
            slice_wipe_delay=slice_wipe_delay,
        )
        self.tasks.append(asyncio.create_task(nodes.run()))

        async def synced() -> bool:
            return nodes.has_synced()

        await wait_for(synced, what="nodes synced", timeout=10)
        self.nodes = nodes
        return nodes

    async def stop_nodes(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()

    async def start_plugin(self, driver: FakeDriver, **options: object) -> Helper:
        helper = Helper(
            driver,
            driver_name=driver.driver_name,
            node_name=NODE,
            client=self.cluster.client(node_user(NODE)),
            kubelet_dir=self.kubelet_dir / NODE,
            **options,  # type: ignore[arg-type]
        )
        driver.helper = helper
        await helper.start()
        self.helpers.append(helper)
        return helper

    async def registered(self, nodes: Nodes) -> list[str]:
        async def probe() -> list[str] | None:
            return nodes.plugin_managers[NODE].driver_names or None

        return await wait_for(probe, what="plugin registered", timeout=10)

    async def gpu_pod(self, *names: str, claim_name: str = "my-gpu", driver: str = DRIVER) -> Obj:
        """Pods (default: `gpu-pod`) sharing a claim allocated one device of `driver` on this
        node and reserved for them, bound to the node; returns the claim."""
        pods = [
            await self.admin.create(
                kinds.PODS,
                make_pod(name).claim_ref("gpu", claim_name, mode=versions.STRUCTURED).obj(),
                "default",
            )
            for name in names or ("gpu-pod",)
        ]
        claim = meta.deep_copy(
            await self.admin.create(
                kinds.RESOURCE_CLAIMS_V1,
                make_structured_claim(claim_name).request("gpu", "gpu.example.com").obj(),
                "default",
            )
        )
        claim["status"] = {
            "allocation": allocation(
                device_result("gpu", "dev-1", driver=driver, pool=NODE), node=NODE
            ),
            "reservedFor": [
                {"resource": "pods", "name": meta.name(p), "uid": meta.uid(p)} for p in pods
            ],
        }
        claim = await self.admin.update(kinds.RESOURCE_CLAIMS_V1, claim, subresource="status")
        for pod in pods:
            binding = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": meta.name(pod), "namespace": "default"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": NODE},
            }
            await self.admin.create(
                kinds.PODS, binding, "default", subresource="binding", name=meta.name(pod)
            )
        return claim

    async def pod_in(self, phase: str, name: str = "gpu-pod") -> Obj:
        async def probe() -> Obj | None:
            pod = await self.admin.get(kinds.PODS, name, "default")
            return pod if (pod.get("status") or {}).get("phase") == phase else None

        # A pod that failed to start waits out its back-off (up to 5 s) before it tries again.
        return await wait_for(probe, what=f"pod {phase}", timeout=20)


def checkpointed_claims(env: Env) -> list[Obj]:
    state = orjson.loads((env.kubelet_dir / NODE / "dra_manager_state").read_bytes())
    return list(state["claims"])


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    cluster = await start_cluster(mode=versions.STRUCTURED)
    # Unix socket paths are short (108 bytes): a short directory of its own.
    directory = Path(tempfile.mkdtemp(prefix="kp", dir="/tmp"))
    started = Env(cluster, directory)
    try:
        yield started
    finally:
        for helper in started.helpers:
            await helper.stop()
        await started.stop_nodes()
        await cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)
