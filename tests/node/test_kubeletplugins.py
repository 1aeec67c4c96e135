"""Simulated nodes as kubelets for DRA drivers: a test driver built on `draplane.kubeletplugin`
registers over real gRPC on Unix sockets in a temporary kubelet directory, against a real
in-process 1.36 cluster (`pluginenv`). The test plays the scheduler."""

from __future__ import annotations

import asyncio

import grpc
import grpc.aio
import orjson
import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.apiserver import containerlogs
from draplane.kubeletapi import registration_grpc
from draplane.kubeletplugin._servers import RegistrationServicer
from draplane.node import PREPARE_FAILED
from draplane.testing.apistate import events_for, wait_for

from .pluginenv import DRIVER, NODE, Env, FakeDriver, checkpointed_claims, env

__all__ = ["env"]


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
