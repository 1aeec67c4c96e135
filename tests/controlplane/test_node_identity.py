"""The simulated nodes' identities in a `ControlPlane`: every node reports the served
Kubernetes version as its kubelet's (what `/version` says), and with `transport="http"` the
example driver's kubelet plugin on each node writes `status.devices` with its own token bound
to that node, which another node's claim refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import aiohttp
import orjson
import pytest

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.kubeconfig import load_kubeconfig
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.drivers.example import DRIVER_NAME, StructuredNodePlugin
from draplane.testing.apistate import wait_for
from draplane.testing.manifests import apply_manifests

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "examples" / "structured" / "pod-with-template-claim.yaml"
)


def _config(
    tmp_path: Path, mode: versions.Mode, transport: Literal["local", "http"], nodes: int
) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=nodes,
        store="memory",
        transport=transport,
        kubernetes_version=mode,
    )


async def _version(plane: ControlPlane) -> Obj:
    config = load_kubeconfig(plane.kubeconfig_path)
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{config.server}/version", ssl=config.ssl_context()) as response,
    ):
        assert response.status == 200
        info: Obj = orjson.loads(await response.read())
        return info


@pytest.mark.parametrize(
    ("mode", "kubelet_version"),
    [
        pytest.param(versions.CLASSIC, "v1.28.0", id="1.28"),
        pytest.param(versions.STRUCTURED, "v1.36.0", id="1.36"),
    ],
)
async def test_nodes_report_the_served_kubernetes_version(
    tmp_path: Path, mode: versions.Mode, kubelet_version: str
) -> None:
    plane = ControlPlane(_config(tmp_path, mode, "local", 1))
    await plane.start()
    try:
        node = await plane.client().get(kinds.NODES, "node-0")
        info = await _version(plane)
    finally:
        await plane.stop()

    assert node["status"]["nodeInfo"]["kubeletVersion"] == kubelet_version
    assert node["status"]["nodeInfo"]["kubeletVersion"] == info["gitVersion"]


async def test_http_transport_plugins_write_status_devices_of_their_own_nodes(
    tmp_path: Path,
) -> None:
    plane = ControlPlane(_config(tmp_path, versions.STRUCTURED, "http", 2))
    await plane.start()
    try:
        admin = plane.client()
        await apply_manifests(admin, EXAMPLE)

        async def claim_with_devices() -> Obj | None:
            listed = (await admin.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
            return listed[0] if listed and (listed[0].get("status") or {}).get("devices") else None

        claim = await wait_for(claim_with_devices, what="the claim's status.devices")
        pod = await admin.get(kinds.PODS, "pod-with-a100", "default")
        node = pod["spec"]["nodeName"]
        other = next(n for n in ("node-0", "node-1") if n != node)
        plugin = plane.node_plugins.plugin(DRIVER_NAME, other)
        assert isinstance(plugin, StructuredNodePlugin)
        assert plugin.status_client is not None
        rewritten = meta.deep_copy(claim)
        rewritten["status"]["devices"][0]["conditions"] = []
        with pytest.raises(errors.StatusError) as refused:
            await plugin.status_client.update(
                kinds.RESOURCE_CLAIMS_V1, rewritten, subresource="status"
            )
        stored = await admin.get(kinds.RESOURCE_CLAIMS_V1, meta.name(claim), "default")
    finally:
        await plane.stop()

    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(d["driver"], d["pool"], d["device"]) for d in claim["status"]["devices"]] == [
        (r["driver"], r["pool"], r["device"]) for r in results
    ]
    assert [r["pool"] for r in results] == [node]
    assert refused.value.code == 422
    causes = [(c["reason"], c["field"]) for c in refused.value.details["causes"]]
    assert causes == [("FieldValueForbidden", "status.devices")]
    assert stored["status"]["devices"] == claim["status"]["devices"]
