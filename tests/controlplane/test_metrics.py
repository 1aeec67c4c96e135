"""`draplane up`'s /metrics (the control plane's one registry, served by its API server) is
shaped as a Kubernetes component's: process series, no `_created` series."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import generate_latest

from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.testing.exposition import check_component_exposition


async def test_control_plane_registry_is_a_component_registry(tmp_path: Path) -> None:
    plane = ControlPlane(ControlPlaneConfig(data_dir=str(tmp_path), port=0, store="memory"))
    try:
        text = generate_latest(plane.metrics).decode()
    finally:
        await plane.storage.close()

    check_component_exposition(text)


async def test_simulated_nodes_add_no_series_per_node(tmp_path: Path) -> None:
    """A real kubelet's /metrics is its own; thousands of simulated kubelets in one process
    export nothing per node (at 5,000 nodes their work queues made /metrics 11 MB)."""
    config = ControlPlaneConfig(data_dir=str(tmp_path), port=0, store="memory", nodes=3)
    plane = ControlPlane(config)
    await plane.start()
    try:
        text = generate_latest(plane.metrics).decode()
    finally:
        await plane.stop()

    assert [line for line in text.splitlines() if "node-" in line] == []
    assert 'workqueue_depth{name="resource_claim"}' in text  # the controllers' queues stay
