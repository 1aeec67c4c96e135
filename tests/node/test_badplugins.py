"""Kubelet plugins that misbehave, over real Unix sockets: each gets a clear event or log line
and none wedges the node or another driver (a well-behaved plugin registered beside it keeps
registering and running its pods)."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.kubeletapi import dra_v1_pb2, dra_v1_pb2_grpc, registration_grpc
from draplane.kubeletplugin import PrepareResult
from draplane.kubeletplugin._servers import RegistrationServicer
from draplane.node import PREPARE_FAILED
from draplane.testing.apistate import events_for, wait_for

from .pluginenv import DRIVER, NODE, Env, FakeDriver, env

__all__ = ["env"]

BAD = "bad.example.com"


async def failed_with(env: Env, pod_name: str, text: str) -> Obj:
    """The pod's first FailedPrepareDynamicResources event that says `text`, once its
    containers wait in ContainerCreating."""

    async def probe() -> Obj | None:
        pod = await env.admin.get(kinds.PODS, pod_name, "default")
        events = [
            e
            for e in await events_for(env.admin, pod, reason=PREPARE_FAILED)
            if text in e["message"]
        ]
        waiting = [cs.get("state") for cs in pod["status"].get("containerStatuses") or []]
        ready = events and waiting == [{"waiting": {"reason": "ContainerCreating"}}]
        return events[0] if ready else None

    return await wait_for(probe, what=f"{pod_name}: event with {text!r}", timeout=20)


@dataclass
class HangingDriver(FakeDriver):
    """Prepares only once `release` is set."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    calls: int = 0

    async def prepare_resource_claims(self, claims: list[Obj]) -> dict[str, PrepareResult]:
        self.calls += 1
        await self.release.wait()
        return await super().prepare_resource_claims(claims)


async def test_a_registration_socket_that_hangs_delays_no_other_plugin(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    nodes = await env.start_nodes()
    registry = env.kubelet_dir / NODE / "plugins_registry"
    accepted: list[asyncio.StreamWriter] = []

    async def never_answer(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)  # the connection stays open, nothing is ever written

    hung = await asyncio.start_unix_server(never_answer, path=str(registry / "hung-reg.sock"))
    try:
        await wait_for(lambda: accepted or None, what="the node dialed the socket", timeout=5)
        started = time.monotonic()
        await env.start_plugin(FakeDriver())
        assert await env.registered(nodes) == [DRIVER]
        assert time.monotonic() - started < 1.0
        await env.gpu_pod()
        await env.pod_in("Running")
        await asyncio.sleep(1.2)  # GetInfo's 1 s timeout
        assert any(
            "failed to get plugin info using RPC GetInfo at socket" in r.getMessage()
            and "hung-reg.sock" in r.getMessage()
            and r.levelno == logging.WARNING
            for r in caplog.records
        )
    finally:
        for writer in accepted:
            writer.close()
        hung.close()
        await hung.wait_closed()


async def test_a_dra_service_that_hangs_holds_back_only_its_pods(env: Env) -> None:
    nodes = await env.start_nodes()
    dra = nodes.kubelets[NODE].ctx.dra
    assert dra is not None
    dra.timeout = 3.0
    hanging = HangingDriver(driver_name=BAD)
    await (await env.start_plugin(hanging)).wait_registered(timeout=10)
    await (await env.start_plugin(FakeDriver())).wait_registered(timeout=10)
    # More stuck pods than the node has workers.
    for name in ("stuck-0", "stuck-1", "stuck-2"):
        await env.gpu_pod(name, claim_name=f"{name}-claim", driver=BAD)
    await wait_for(lambda: hanging.calls or None, what="a prepare in flight", timeout=10)
    started = time.monotonic()
    await env.gpu_pod("fine")
    await env.pod_in("Running", "fine")
    assert time.monotonic() - started < dra.timeout

    event = await failed_with(env, "stuck-0", "NodePrepareResources failed for driver")
    assert "DEADLINE_EXCEEDED" in event["message"]
    hanging.release.set()
    for name in ("stuck-0", "stuck-1", "stuck-2"):
        await env.pod_in("Running", name)


class BadDRA:
    """v1.DRAPlugin answering NodePrepareResources as `mode` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def NodePrepareResources(self, request: Any, context: Any) -> Any:
        response = dra_v1_pb2.NodePrepareResourcesResponse()
        if self.mode == "unknown-uid":
            response.claims["not-a-claim"].devices.append(
                dra_v1_pb2.Device(pool_name=NODE, device_name="dev-1")
            )
        elif self.mode == "abort":
            await context.abort(grpc.StatusCode.INTERNAL, "plugin crashed inside")
        return response  # "left-out": no entry for the claim

    async def NodeUnprepareResources(self, request: Any, context: Any) -> Any:
        return dra_v1_pb2.NodeUnprepareResourcesResponse()


def undecodable() -> grpc.GenericRpcHandler:
    """NodePrepareResources answering bytes that are no protobuf message."""

    async def prepare(request: bytes, context: Any) -> bytes:
        return b"\xff\xff\xff\xff"

    return grpc.method_handlers_generic_handler(
        "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin",
        {"NodePrepareResources": grpc.unary_unary_rpc_method_handler(prepare)},
    )


async def serve_bad_plugin(directory: Path, mode: str) -> list[grpc.aio.Server]:
    endpoint = directory / "plugins" / BAD / "dra.sock"
    endpoint.parent.mkdir(parents=True, exist_ok=True)
    dra = grpc.aio.server()
    if mode == "undecodable":
        dra.add_generic_rpc_handlers((undecodable(),))
    else:
        dra_v1_pb2_grpc.add_DRAPluginServicer_to_server(BadDRA(mode), dra)
    dra.add_insecure_port(f"unix://{endpoint}")
    await dra.start()
    registrar = grpc.aio.server()
    registration_grpc.add_RegistrationServicer_to_server(
        RegistrationServicer(driver_name=BAD, endpoint=str(endpoint), services=("v1.DRAPlugin",)),
        registrar,
    )
    registrar.add_insecure_port(f"unix://{directory / 'plugins_registry' / 'bad-reg.sock'}")
    await registrar.start()
    return [registrar, dra]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        pytest.param(
            "unknown-uid",
            f"NodePrepareResources of driver {BAD} returned result for unknown claim UID "
            "not-a-claim",
            id="unknown-claim-uid",
        ),
        pytest.param(
            "left-out", "NodePrepareResources left out claim default/bad-claim", id="left-out"
        ),
        pytest.param(
            "undecodable",
            f"NodePrepareResources failed for driver {BAD}: undecodable response (4 bytes)",
            id="malformed-response",
        ),
        pytest.param(
            "abort",
            f"NodePrepareResources failed for driver {BAD}: INTERNAL: plugin crashed inside",
            id="error-status",
        ),
    ],
)
async def test_a_bad_response_fails_the_pod_and_nothing_else(
    env: Env, mode: str, message: str
) -> None:
    nodes = await env.start_nodes()
    servers = await serve_bad_plugin(env.kubelet_dir / NODE, mode)
    try:
        await (await env.start_plugin(FakeDriver())).wait_registered(timeout=10)

        async def both() -> list[str] | None:
            names = nodes.plugin_managers[NODE].driver_names
            return names if len(names) == 2 else None

        assert await wait_for(both, what="both plugins registered", timeout=10) == [BAD, DRIVER]
        await env.gpu_pod("bad", claim_name="bad-claim", driver=BAD)
        event = await failed_with(env, "bad", message)
        assert event["type"] == "Warning"
        await env.gpu_pod("fine")
        await env.pod_in("Running", "fine")
        pod = await env.admin.get(kinds.PODS, "bad", "default")
        assert pod["status"]["phase"] == "Pending"
    finally:
        for server in servers:
            await server.stop(None)


async def test_a_plugin_killed_during_prepare_and_restarted(env: Env) -> None:
    await env.start_nodes()
    hanging = HangingDriver()
    helper = await env.start_plugin(hanging)
    await helper.wait_registered(timeout=10)
    claim = await env.gpu_pod()
    await wait_for(lambda: hanging.calls or None, what="a prepare in flight", timeout=10)
    await helper.stop()  # the in-flight call is cut off, the sockets go
    env.helpers.remove(helper)
    await failed_with(env, "gpu-pod", "NodePrepareResources failed for driver")

    restarted = FakeDriver()
    await (await env.start_plugin(restarted)).wait_registered(timeout=10)
    await env.pod_in("Running")
    assert restarted.prepared == [[("default", "my-gpu", meta.uid(claim))]]


async def test_a_wrong_version_list_is_refused_beside_a_good_plugin(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    nodes = await env.start_nodes()
    wrong = await env.start_plugin(
        FakeDriver(driver_name=BAD), services=("v9.DRAPlugin", "v1alpha3.DRAPlugin")
    )
    await env.start_plugin(FakeDriver())
    status = await wrong.wait_registered(timeout=10)
    assert not status.plugin_registered
    assert "none of services supported by the plugin ['v9.DRAPlugin', 'v1alpha3.DRAPlugin']" in (
        status.error
    )
    assert await env.registered(nodes) == [DRIVER]
    assert any(
        f"plugin {BAD} not registered: none of services" in r.getMessage()
        and r.levelno == logging.WARNING
        for r in caplog.records
    )
    await env.gpu_pod()
    await env.pod_in("Running")
