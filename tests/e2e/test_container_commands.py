"""End to end with kubectl: simulated containers run as their command says, so a Job of an
image whose default command exits completes, a script's exit code fails its pod, and what a
container echoes is in its log."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.controlplane import ControlPlane
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = [pytest.mark.slow, pytest.mark.kubectl]


@pytest.fixture
def kubectl(plane: ControlPlane, tmp_path: Path) -> Kubectl:
    version = next((v for v in reversed(VERSIONS) if kubectl_binary(v)), None)
    if version is None:
        pytest.skip("no kubectl binary is installed")
    binary = kubectl_binary(version)
    assert binary is not None
    return Kubectl(binary, version, plane.kubeconfig_path, tmp_path / "kube-cache")


async def test_job_of_busybox_completes(kubectl: Kubectl) -> None:
    await kubectl.run("create", "job", "once", "--image=busybox")
    out = await kubectl.run("wait", "--for=condition=complete", "job/once", "--timeout=30s")
    got = await kubectl.run("get", "job", "once", "-o", "jsonpath={.status.succeeded}")

    assert out.strip() == "job.batch/once condition met"
    assert got == "1"


async def test_script_exit_code_and_echo(kubectl: Kubectl) -> None:
    await kubectl.run(
        "run", "script", "--image=busybox", "--restart=Never", "--",
        "sh", "-c", "echo hello from draplane; exit 3",
    )  # fmt: skip
    await kubectl.run(
        "wait", "--for=jsonpath={.status.phase}=Failed", "pod/script", "--timeout=30s"
    )
    code = await kubectl.run(
        "get", "pod", "script",
        "-o", "jsonpath={.status.containerStatuses[0].state.terminated.exitCode}",
    )  # fmt: skip
    log = await kubectl.run("logs", "script")

    assert code == "3"
    assert "hello from draplane" in log.splitlines()
    assert log.splitlines()[-1] == "draplane: container script exited with code 3 (Error)"
