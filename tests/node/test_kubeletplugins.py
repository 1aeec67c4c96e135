"""Simulated nodes as kubelets for DRA drivers: a test driver built on `draplane.kubeletplugin`
registers over real gRPC on Unix sockets in a temporary kubelet directory, against a real
in-process 1.36 cluster. The test plays the scheduler (allocates and reserves the claim)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import grpc.aio
import orjson
import pytest

from draplane.api import kinds, meta, versions
from draplane.api.auth import node_user
from draplane.api.meta import Obj
from draplane.apiserver import containerlogs
from draplane.clock import REAL_CLOCK
from draplane.dra.kubeletplugin import NodePluginRegistry
from draplane.kubeletapi import registration_grpc
from draplane.kubeletplugin import Device, Helper, NamespacedObject, PrepareResult
from draplane.kubeletplugin._servers import RegistrationServicer
from draplane.node import PREPARE_FAILED, Nodes
from draplane.testing.allocatorcases import allocation
from draplane.testing.apistate import events_for, wait_for
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
                if r["driver"] == DRIVER
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
            driver_name=DRIVER,
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

    async def gpu_pod(self, *names: str, claim_name: str = "my-gpu") -> Obj:
        """Pods (default: `gpu-pod`) sharing a claim allocated one device of this node and
        reserved for them, bound to the node; returns the claim."""
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
                device_result("gpu", "dev-1", driver=DRIVER, pool=NODE), node=NODE
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


@pytest.mark.parametrize(
    "services",
    [
        pytest.param(("v1.DRAPlugin", "v1beta1.DRAPlugin"), id="v1"),
        pytest.param(("v1beta1.DRAPlugin",), id="v1beta1"),
    ],
)
async def test_claim_prepared_through_the_plugin(env: Env, services: tuple[str, ...]) -> None:
    nodes = await env.start_nodes()
    driver = FakeDriver()
    helper = await env.start_plugin(driver, services=services)
    status = await helper.wait_registered(timeout=10)
    assert (status.plugin_registered, status.error) == (True, "")
    assert await env.registered(nodes) == [DRIVER]
    assert nodes.plugin_managers[NODE].plugin(DRIVER).service == services[0]  # type: ignore[union-attr]

    claim = await env.gpu_pod()
    pod = await env.pod_in("Running")
    assert driver.prepared == [[("default", "my-gpu", meta.uid(claim))]]
    run = containerlogs.instance(pod, "ctr", previous=False)
    assert run is not None
    text = [t for _, t in containerlogs.lines(pod, "ctr", run, configmaps={}, claims={})]
    assert "TEST_VAR=hello" in text
    assert "DEVICE=dev-1" in text
    checkpoint = orjson.loads((env.kubelet_dir / NODE / "dra_manager_state").read_bytes())
    [entry] = checkpoint["claims"]
    assert (entry["uid"], entry["pods"]) == (meta.uid(claim), [meta.uid(pod)])
    assert entry["drivers"][DRIVER][0]["deviceName"] == "dev-1"

    # A restarted node finds the claim in its checkpoint: no second NodePrepareResources.
    await env.stop_nodes()
    nodes = await env.start_nodes()
    assert await env.registered(nodes) == [DRIVER]
    await asyncio.sleep(0.3)
    assert len(driver.prepared) == 1
    assert (await env.pod_in("Running"))["metadata"]["uid"] == meta.uid(pod)

    # The pod goes: the claim no pod on the node uses any more is unprepared.
    await env.admin.delete(kinds.PODS, "gpu-pod", "default")

    async def unprepared() -> list[list[str]] | None:
        return driver.unprepared or None

    assert await wait_for(unprepared, what="unprepared", timeout=10) == [[meta.uid(claim)]]
    # The node records the release once the plugin has answered.
    await wait_for(
        lambda: not checkpointed_claims(env), what="checkpoint without claims", timeout=10
    )
    assert not list((env.kubelet_dir / NODE / "cdi").iterdir())


async def test_prepare_error_holds_the_pod_back(env: Env) -> None:
    await env.start_nodes()
    driver = FakeDriver(fail="device dev-1 is broken")
    await (await env.start_plugin(driver)).wait_registered(timeout=10)
    await env.gpu_pod()

    async def failed() -> tuple[list[Obj], Obj] | None:
        pod = await env.admin.get(kinds.PODS, "gpu-pod", "default")
        events = [
            e
            for e in await events_for(env.admin, pod, reason=PREPARE_FAILED)
            if "device dev-1 is broken" in e["message"]
        ]
        # The event and the Pending status are two writes: wait for both. (A prepare before
        # the node has finished registering the plugin fails as "not registered" first.)
        return (events, pod) if events and pod["status"].get("containerStatuses") else None

    [event, *_], pod = await wait_for(failed, what="FailedPrepareDynamicResources", timeout=20)
    assert event["type"] == "Warning"
    assert pod["status"]["phase"] == "Pending"
    [cs] = pod["status"]["containerStatuses"]
    assert cs["state"] == {"waiting": {"reason": "ContainerCreating"}}

    driver.fail = ""
    await env.pod_in("Running")


async def test_socket_removed_deregisters_and_returning_registers(env: Env) -> None:
    nodes = await env.start_nodes()
    helper = await env.start_plugin(FakeDriver())
    assert await env.registered(nodes) == [DRIVER]
    await helper.stop()
    env.helpers.remove(helper)

    async def deregistered() -> bool:
        return not nodes.plugin_managers[NODE].driver_names

    await wait_for(deregistered, what="deregistered", timeout=10)
    await env.start_plugin(FakeDriver())
    assert await env.registered(nodes) == [DRIVER]


async def test_unsupported_services_are_refused(env: Env) -> None:
    nodes = await env.start_nodes()
    helper = await env.start_plugin(FakeDriver(), services=("v9.DRAPlugin",))
    status = await helper.wait_registered(timeout=10)
    assert not status.plugin_registered
    assert "none of services supported by the plugin" in status.error
    assert nodes.plugin_managers[NODE].driver_names == []


SLICE = {"nodeName": NODE, "driver": DRIVER, "devices": [{"name": "dev-1"}]}


@pytest.mark.parametrize(
    ("back_in", "wiped"),
    [
        pytest.param(None, True, id="gone-wiped-after-the-delay"),
        pytest.param(0.0, False, id="back-in-time-kept"),
    ],
)
async def test_slices_of_a_driver_without_plugins_are_wiped(
    env: Env, back_in: float | None, wiped: bool
) -> None:
    nodes = await env.start_nodes(slice_wipe_delay=0.5)
    helper = await env.start_plugin(FakeDriver())
    assert await env.registered(nodes) == [DRIVER]
    await helper.publish_resources([dict(SLICE)])  # type: ignore[list-item]
    await helper.stop()
    env.helpers.remove(helper)
    if back_in is not None:
        await env.start_plugin(FakeDriver())
        assert await env.registered(nodes) == [DRIVER]
    await asyncio.sleep(1.0)
    slices = (await env.admin.list(kinds.RESOURCE_SLICES))["items"]
    assert [s["spec"]["driver"] for s in slices] == ([] if wiped else [DRIVER])


async def test_shared_claim_is_prepared_once_and_unprepared_after_its_last_pod(env: Env) -> None:
    await env.start_nodes()
    driver = FakeDriver()
    await (await env.start_plugin(driver)).wait_registered(timeout=10)
    claim = await env.gpu_pod("first", "second", claim_name="shared")
    await env.pod_in("Running", "first")
    await env.pod_in("Running", "second")
    assert driver.prepared == [[("default", "shared", meta.uid(claim))]]

    await env.admin.delete(kinds.PODS, "first", "default")

    async def gone() -> bool:
        names = [meta.name(p) for p in (await env.admin.list(kinds.PODS, "default"))["items"]]
        return names == ["second"]

    await wait_for(gone, what="first pod gone", timeout=10)
    assert driver.unprepared == []
    [entry] = checkpointed_claims(env)
    assert len(entry["pods"]) == 1

    await env.admin.delete(kinds.PODS, "second", "default")

    async def unprepared() -> list[list[str]] | None:
        return driver.unprepared or None

    assert await wait_for(unprepared, what="unprepared", timeout=10) == [[meta.uid(claim)]]


async def test_an_endpoint_registers_once(env: Env) -> None:
    nodes = await env.start_nodes()
    helper = await env.start_plugin(FakeDriver())
    assert await env.registered(nodes) == [DRIVER]
    # A second registration socket announcing the same DRA endpoint is refused.
    second = RegistrationServicer(
        driver_name=DRIVER, endpoint=str(helper.endpoint), services=("v1.DRAPlugin",)
    )
    server = grpc.aio.server()
    registration_grpc.add_RegistrationServicer_to_server(second, server)
    server.add_insecure_port(f"unix://{helper.registration_socket.parent / 'second-reg.sock'}")
    await server.start()
    try:
        await asyncio.wait_for(second.notified.wait(), 10)
    finally:
        await server.stop(None)
    assert second.status is not None
    assert not second.status.plugin_registered
    assert f"endpoint {helper.endpoint} already registered" in second.status.error
    assert nodes.plugin_managers[NODE].driver_names == [DRIVER]
