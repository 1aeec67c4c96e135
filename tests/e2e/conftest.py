"""The in-process control plane the end-to-end tests drive: one node on the memory store; a
module changes it by overriding `plane_config`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from draplane.api import versions
from draplane.controlplane import ControlPlane, ControlPlaneConfig


@pytest.fixture
def plane_config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=1,
        store="memory",
        kubernetes_version=versions.CLASSIC,
    )


@pytest.fixture
async def plane(plane_config: ControlPlaneConfig) -> AsyncIterator[ControlPlane]:
    started = ControlPlane(plane_config)
    await started.start()
    try:
        yield started
    finally:
        await started.stop()
