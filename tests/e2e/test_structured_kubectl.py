"""The structured flow through kubectl 1.32 against a 1.36 control plane over HTTPS: the A100
template example runs and its log shows the device, an unsatisfiable claim leaves its pod
Pending with the scheduler's message, and `kubectl delete` frees the device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draplane.api import versions
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.testing.apistate import wait_for
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = [pytest.mark.slow, pytest.mark.kubectl]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "structured"
UNSATISFIABLE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: h200, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          selectors:
          - cel: {expression: 'device.attributes["driver.example.com"].model == "H200"'}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-with-h200, namespace: default}
spec:
  containers:
  - name: ctr
    image: registry.k8s.io/pause:3.9
    resources: {claims: [{name: gpu}]}
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: h200
"""


@pytest.fixture
def plane_config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=1,
        store="memory",
        transport="http",
        kubernetes_version=versions.STRUCTURED,
        drivers=[DriverSpec(devices_per_node=1)],
    )


@pytest.fixture
def kubectl(plane: ControlPlane, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary("1.32")
    if binary is None:
        pytest.skip("kubectl.1.32 is not installed")
    return Kubectl(binary, "1.32", plane.kubeconfig_path, tmp_path / "kube-cache")


async def phase(kubectl: Kubectl, pod: str) -> str:
    return await kubectl.run("get", "pod", pod, "-o", "jsonpath={.status.phase}")


async def test_template_claim_unsatisfiable_and_freed(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", str(EXAMPLES / "pod-with-template-claim.yaml"))

    async def a100_runs() -> bool:
        return await phase(kubectl, "pod-with-a100") == "Running"

    await wait_for(a100_runs, timeout=30, what="pod-with-a100 runs")
    log = await kubectl.run("logs", "pod-with-a100")
    assert "device gpu-0 of driver driver.example.com" in log
    claims = json.loads(await kubectl.run("get", "resourceclaims", "-o", "json"))["items"]
    [result] = claims[0]["status"]["allocation"]["devices"]["results"]
    assert (result["pool"], result["device"]) == ("node-0", "gpu-0")

    # No H200 anywhere: Pending with the DynamicResources Filter message.
    await kubectl.run("apply", "-f", "-", stdin=UNSATISFIABLE)

    async def unschedulable() -> str | None:
        out = await kubectl.run(
            "get",
            "pod",
            "pod-with-h200",
            "-o",
            'jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}',
        )
        return out or None

    message = await wait_for(unschedulable, timeout=30, what="pod-with-h200 unschedulable")
    assert "cannot allocate all claims" in message
    assert await phase(kubectl, "pod-with-h200") == "Pending"

    # Deleting the pod deletes its generated claim: the device is free for the next pod.
    await kubectl.run("delete", "pod", "pod-with-a100", "--wait=false")

    async def claim_gone() -> bool:
        out = await kubectl.run("get", "resourceclaims", "-o", "name")
        return "pod-with-a100" not in out

    await wait_for(claim_gone, timeout=30, what="the generated claim is deleted")
    await kubectl.run(
        "apply", "-f", "-", stdin=(EXAMPLES / "pod-with-template-claim.yaml").read_text()
    )
    await wait_for(a100_runs, timeout=30, what="a new pod-with-a100 runs on the freed device")
