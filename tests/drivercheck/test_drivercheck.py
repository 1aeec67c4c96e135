"""`draplane.drivercheck` against real kubelet plugins over Unix sockets and a real in-process
1.36 API server: the example driver's plugin passes every check; a deliberately broken plugin
fails exactly the checks it breaks, with the evidence saying why."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from draplane.api import kinds, versions
from draplane.api.auth import node_user
from draplane.drivercheck import FAIL, PASS, SKIP, Options, Report, run_checks
from draplane.drivers.example import DeviceProfile, KubeletPluginRunner
from draplane.kubeletapi import dra_v1_pb2, dra_v1_pb2_grpc, registration_grpc
from draplane.kubeletplugin._servers import RegistrationServicer
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node
from draplane.testing.cluster import Cluster, start_cluster

NODE = "node-0"
BROKEN = "broken.example.com"


@dataclass
class Env:
    cluster: Cluster
    kubelet_dir: Path

    async def check(self, driver: str) -> Report:
        return await run_checks(
            Options(
                kubelet_dir=self.kubelet_dir,
                node=NODE,
                driver=driver,
                client=self.cluster.client(),
                timeout=5.0,
            )
        )


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    cluster = await start_cluster(mode=versions.STRUCTURED)
    directory = Path(tempfile.mkdtemp(prefix="dc", dir="/tmp"))
    await cluster.client().create(kinds.NODES, make_node(NODE).obj())
    try:
        yield Env(cluster, directory)
    finally:
        await cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)


def statuses(report: Report) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


def evidence(report: Report, name: str) -> str:
    [check] = [c for c in report.checks if c.name == name]
    return "\n".join(check.evidence)


async def test_the_example_plugin_passes_every_check(env: Env) -> None:
    runner = KubeletPluginRunner(
        env.cluster.client(node_user(NODE)),
        NODE,
        env.kubelet_dir / NODE,
        DeviceProfile(count=4, model="A100", memory="40Gi"),
    )
    task = asyncio.create_task(runner.run())
    try:
        await wait_for(runner.has_synced, what="slices published", timeout=10)
        report = await env.check("driver.example.com")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    # No kubelet runs the node and no --plugin-command: those two are skipped.
    assert statuses(report) == {
        **{c.name: PASS for c in report.checks},
        "prepare-error-event": SKIP,
        "plugin-restart": SKIP,
    }, report.to_text()
    assert report.ok
    assert "supported_versions=['v1.DRAPlugin', 'v1beta1.DRAPlugin']" in evidence(
        report, "registration"
    )
    assert "resolve in cdi/" in evidence(report, "prepare-idempotent")
    # The harness leaves no claims behind.
    assert (await env.cluster.client().list(kinds.RESOURCE_CLAIMS_V1))["items"] == []
    assert report.to_json()["passed"] is True


class BrokenDRA:
    """Breaks the DRA contract: a second prepare of a claim fails, CDI IDs no spec defines, a
    claim the API does not have aborts the whole call, only the first claim of a batch is
    prepared, and a device serves only the first request."""

    def __init__(self) -> None:
        self.prepared: set[str] = set()

    async def NodePrepareResources(self, request: Any, context: Any) -> Any:
        response = dra_v1_pb2.NodePrepareResourcesResponse()
        for claim in request.claims[:1]:
            if "unknown" in claim.name:
                await context.abort(grpc.StatusCode.INTERNAL, f"no claim {claim.name}")
            if claim.uid in self.prepared:
                response.claims[claim.uid].error = "already prepared"
                continue
            self.prepared.add(claim.uid)
            response.claims[claim.uid].devices.append(
                dra_v1_pb2.Device(
                    request_names=["req-0"],
                    pool_name=NODE,
                    device_name="dev-0",
                    cdi_device_ids=[f"{BROKEN}/dev=missing-{claim.uid}"],
                )
            )
        return response

    async def NodeUnprepareResources(self, request: Any, context: Any) -> Any:
        response = dra_v1_pb2.NodeUnprepareResourcesResponse()
        for claim in request.claims:
            response.claims[claim.uid].error = ""
        return response


async def serve_broken(env: Env) -> list[grpc.aio.Server]:
    node_dir = env.kubelet_dir / NODE
    endpoint = node_dir / "plugins" / BROKEN / "dra.sock"
    endpoint.parent.mkdir(parents=True)
    (node_dir / "plugins_registry").mkdir(parents=True)
    dra = grpc.aio.server()
    dra_v1_pb2_grpc.add_DRAPluginServicer_to_server(BrokenDRA(), dra)
    dra.add_insecure_port(f"unix://{endpoint}")
    registrar = grpc.aio.server()
    registration_grpc.add_RegistrationServicer_to_server(
        RegistrationServicer(
            driver_name=BROKEN, endpoint=str(endpoint), services=("v1.DRAPlugin",)
        ),
        registrar,
    )
    registrar.add_insecure_port(f"unix://{node_dir / 'plugins_registry' / 'broken-reg.sock'}")
    for server in (dra, registrar):
        await server.start()
    # Its slice: no owner reference, a resourceSliceCount that does not add up.
    await env.cluster.client(node_user(NODE)).create(
        kinds.RESOURCE_SLICES,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "broken-slice"},
            "spec": {
                "driver": BROKEN,
                "nodeName": NODE,
                "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 2},
                "devices": [{"name": f"dev-{i}"} for i in range(4)],
            },
        },
    )
    return [dra, registrar]


async def test_a_broken_plugin_fails_the_checks_it_breaks(env: Env) -> None:
    servers = await serve_broken(env)
    try:
        report = await env.check(BROKEN)
    finally:
        for server in servers:
            await server.stop(None)
    assert statuses(report) == {
        "registration": PASS,
        "slices": FAIL,
        "prepare-idempotent": FAIL,
        "unknown-claim": FAIL,
        "unprepare-idempotent": PASS,
        "many-claims": FAIL,
        "requests-and-configs": FAIL,
        "prepare-error-event": SKIP,
        "plugin-restart": SKIP,
    }, report.to_text()
    assert not report.ok
    slices = evidence(report, "slices")
    assert "FAIL: pool 'node-0' generation 1: 1 slices, resourceSliceCount [2]" in slices
    assert "FAIL: broken-slice is owned by Node node-0" in slices
    assert "error 'already prepared'" in evidence(report, "prepare-idempotent")
    assert "failed the whole call" in evidence(report, "unknown-claim")
    assert "left out of the response" in evidence(report, "many-claims")
    assert "FAIL: devices name the requests they serve: ['req-0']" in evidence(
        report, "requests-and-configs"
    )
    text = report.to_text()
    assert "[FAIL] slices" in text and "2 passed, 5 failed, 2 skipped" in text
