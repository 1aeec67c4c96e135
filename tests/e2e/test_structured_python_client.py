"""The structured flow through the official Kubernetes 1.36 Python client (`ResourceV1Api` and
its v1 models, installed in `<venv>/kubernetes-v1` by `make test`) against a 1.36 control plane
over HTTPS: a template claim selecting an A100 gets such a device and its pod runs; deleting the
pod deletes the generated claim. Runs in its own interpreter (one `kubernetes` per process)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from draplane.api import versions
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec

pytestmark = [pytest.mark.slow]

CLIENT_DIR = Path(
    os.environ.get("DRAPLANE_KUBERNETES_V1_CLIENT", Path(sys.prefix) / "kubernetes-v1")
)

SCRIPT = r"""
import json, sys, time
from kubernetes import client, config

api = config.new_client_from_config(config_file=sys.argv[1])
v1, core = client.ResourceV1Api(api), client.CoreV1Api(api)
selector = 'device.attributes["driver.example.com"].model == "A100"'
template = client.V1ResourceClaimTemplate(
    metadata=client.V1ObjectMeta(name="single-a100"),
    spec=client.V1ResourceClaimTemplateSpec(
        spec=client.V1ResourceClaimSpec(
            devices=client.V1DeviceClaim(
                requests=[
                    client.V1DeviceRequest(
                        name="gpu",
                        exactly=client.V1ExactDeviceRequest(
                            device_class_name="gpu.example.com",
                            selectors=[
                                client.V1DeviceSelector(
                                    cel=client.V1CELDeviceSelector(expression=selector)
                                )
                            ],
                        ),
                    )
                ]
            )
        )
    ),
)
v1.create_namespaced_resource_claim_template("default", template)
# core/v1 as 1.36 serves it: the pod claim names its template directly.
core.create_namespaced_pod("default", client.V1Pod(
    metadata=client.V1ObjectMeta(name="pod-with-a100"),
    spec=client.V1PodSpec(
        containers=[client.V1Container(
            name="ctr", image="registry.k8s.io/pause:3.9",
            resources=client.V1ResourceRequirements(claims=[client.CoreV1ResourceClaim(name="gpu")]),
        )],
        resource_claims=[
            client.V1PodResourceClaim(name="gpu", resource_claim_template_name="single-a100")
        ],
    ),
))
deadline = time.time() + 30
while core.read_namespaced_pod("pod-with-a100", "default").status.phase != "Running":
    assert time.time() < deadline, "pod-with-a100 does not run"
    time.sleep(0.1)
pod = core.read_namespaced_pod("pod-with-a100", "default")
[claim] = v1.list_namespaced_resource_claim("default").items
[result] = claim.status.allocation.devices.results
[slice_] = v1.list_resource_slice(field_selector=f"spec.nodeName={result.pool}").items
[device] = [d for d in slice_.spec.devices if d.name == result.device]
out = {
    "node": pod.spec.node_name,
    "pool": result.pool,
    "driver": result.driver,
    "model": device.attributes["model"].string,
    "generation": slice_.spec.pool.generation,
    "pod_claim": pod.spec.resource_claims[0].to_dict(),
    "claim_status": [s.to_dict() for s in pod.status.resource_claim_statuses],
    "claim_name": claim.metadata.name,
}
core.delete_namespaced_pod("pod-with-a100", "default")
while v1.list_namespaced_resource_claim("default").items:
    assert time.time() < deadline + 30, "the generated claim stays"
    time.sleep(0.1)
out["claims_left"] = 0
print(json.dumps(out))
"""


@pytest.fixture
def plane_config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=1,
        store="memory",
        kubernetes_version=versions.STRUCTURED,
        drivers=[DriverSpec(devices_per_node=2)],
    )


async def test_template_claim_through_resource_v1_api(plane: ControlPlane) -> None:
    if not (CLIENT_DIR / "kubernetes").is_dir():
        pytest.skip(f"the Kubernetes 1.36 Python client is not installed in {CLIENT_DIR}")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRIPT,
        str(plane.kubeconfig_path),
        env={**os.environ, "PYTHONPATH": str(CLIENT_DIR)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 0, stderr.decode()[-3000:]
    out = json.loads(stdout)
    claim_name = out.pop("claim_name")
    assert claim_name.startswith("pod-with-a100-gpu-")
    assert out.pop("pod_claim") == {
        "name": "gpu",
        "resource_claim_name": None,
        "resource_claim_template_name": "single-a100",
    }
    assert out.pop("claim_status") == [{"name": "gpu", "resource_claim_name": claim_name}]
    assert out == {
        "node": "node-0",
        "pool": "node-0",
        "driver": "driver.example.com",
        "model": "A100",
        "generation": 1,
        "claims_left": 0,
    }
