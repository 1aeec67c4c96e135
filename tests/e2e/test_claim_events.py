"""End to end: `kubectl describe resourceclaim` explains why a claim is stuck.

Failures that concern a claim are Warning events on the claim, with the reason the failing
component uses upstream: the driver's `Failed` when it cannot allocate, the claim controller's
`FailedResourceClaimCreation` when a pod names a claim that another pod owns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from draplane.api import kinds, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.testing.apistate import events_for, seed_objects, wait_for
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.slow

TIMEOUT = 30.0


@pytest.fixture
def plane_config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=1,
        store="memory",
        drivers=[DriverSpec(devices_per_node=1)],
        kubernetes_version=versions.CLASSIC,
    )


async def exhausted(client: Client) -> Obj:
    """Two Immediate claims for the node's one device: the second cannot be allocated."""
    await seed_objects(client, make_claim("first").allocation_mode("Immediate").obj())
    await wait_for(
        lambda: _allocated(client, "first"), timeout=TIMEOUT, what="first claim allocated"
    )
    [second] = await seed_objects(client, make_claim().allocation_mode("Immediate").obj())
    return second


async def _allocated(client: Client, name: str) -> bool:
    claim = await client.get(kinds.RESOURCE_CLAIMS, name, "default")
    return bool((claim.get("status") or {}).get("allocation"))


async def owned_by_another_pod(client: Client) -> Obj:
    """Pod my-pod's status names a claim that pod other-pod owns. (Its template never exists,
    so the controller cannot create a claim before the status entry is written.)"""
    other = make_pod("other-pod").obj()
    _, claim, _ = await seed_objects(
        client,
        other,
        make_claim().owned_by_pod(other).obj(),
        make_pod().claim_template("gpu", "never-created").obj(),
    )
    await client.patch(
        kinds.PODS,
        "my-pod",
        {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "my-claim"}]}},
        "default",
        patch_type="strategic",
        subresource="status",
    )
    return claim


@dataclass(frozen=True)
class Case:
    setup: object
    reason: str
    source: str
    message: str


CASES = [
    pytest.param(
        Case(exhausted, "Failed", "resource driver driver.example.com", "resources exhausted"),
        id="allocation-failed",
    ),
    pytest.param(
        Case(
            owned_by_another_pod,
            "FailedResourceClaimCreation",
            "resource_claim",
            "was not created for pod default/my-pod (pod is not owner)",
        ),
        id="claim-owned-by-another-pod",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_describe_resourceclaim_explains_the_failure(
    plane: ControlPlane, tmp_path: Path, case: Case
) -> None:
    binary = kubectl_binary("1.29") or kubectl_binary("1.32") or kubectl_binary("1.27")
    if binary is None:
        pytest.skip("no versioned kubectl binary installed")
    client = plane.client()
    claim = await case.setup(client)  # type: ignore[operator]

    [event, *_] = await wait_for(
        lambda: events_for(client, claim, reason=case.reason),
        timeout=TIMEOUT,
        what=f"{case.reason} event on the claim",
    )
    assert event["type"] == "Warning"
    assert event["source"]["component"] == case.source
    assert case.message in event["message"]
    kubectl = Kubectl(binary, "1.29", plane.kubeconfig_path, tmp_path / "kube-cache")
    described = await kubectl.run("describe", "resourceclaim", "my-claim")
    [line] = [line for line in described.splitlines() if case.reason in line]
    assert line.split()[:2] == ["Warning", case.reason]
    assert case.message[:30] in described.replace("\n", " ")
