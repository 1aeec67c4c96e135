"""`kubectl`: each test runs once per installed kubectl version against the `server` fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary


@pytest.fixture(params=VERSIONS)
def kubectl(request: pytest.FixtureRequest, server: HttpServer, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary(request.param)
    if binary is None:
        pytest.skip(f"kubectl.{request.param} is not installed")
    return Kubectl(binary, request.param, server.kubeconfig_path, tmp_path / "kube-cache")
