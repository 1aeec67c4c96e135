"""ResourceQuota in one 1.36 control plane (in process) with examples/structured/
resourcequota.yaml: two pods' template claims take the namespace's two GPUs, a third pod's
claim is refused by quota admission (the claim controller reports it on the pod, which stays
Pending), and once a pod is deleted the resource quota controller frees its device in
`status.used` and the third pod's claim is created and the pod runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from draplane.api import kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod
from draplane.testing.structured import make_structured_claim, make_structured_claim_template

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "structured" / "resourcequota.yaml"
DEVICES = "gpu.example.com.deviceclass.resource.k8s.io/devices"


@pytest.fixture
async def plane(tmp_path: Path) -> AsyncIterator[ControlPlane]:
    started = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=1,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            drivers=[DriverSpec(devices_per_node=4)],
        )
    )
    await started.start()
    try:
        yield started
    finally:
        await started.stop()


async def _running(client: Client, name: str) -> Obj | None:
    pod = await client.get(kinds.PODS, name, "default")
    return pod if (pod.get("status") or {}).get("phase") == "Running" else None


async def _used(client: Client) -> dict[str, str]:
    quota = await client.get(kinds.RESOURCE_QUOTAS, "gpus", "default")
    return dict((quota.get("status") or {}).get("used") or {})


async def test_a_device_quota_holds_back_a_pod_until_a_device_is_freed(
    plane: ControlPlane,
) -> None:
    admin = plane.client()
    (doc,) = yaml.safe_load_all(EXAMPLE.read_text())
    await admin.create(kinds.RESOURCE_QUOTAS, doc, "default")
    await wait_for(lambda: _used(admin), timeout=10, what="the quota's first status")
    template = make_structured_claim_template(
        "one-gpu", "default", make_structured_claim().request("gpu", "gpu.example.com")
    )
    await admin.create(kinds.RESOURCE_CLAIM_TEMPLATES_V1, template.obj(), "default")
    for name in ("first", "second", "third"):
        pod = make_pod(name).claim_template("gpu", "one-gpu", mode=versions.STRUCTURED).obj()
        await admin.create(kinds.PODS, pod, "default")
        if name != "third":
            await wait_for(lambda n=name: _running(admin, n), timeout=20, what=f"{name} runs")

    async def refused() -> Obj | None:
        events = (await admin.list(kinds.EVENTS, "default"))["items"]
        found = [
            e
            for e in events
            if e["reason"] == "FailedResourceClaimCreation"
            and e["involvedObject"]["name"] == "third"
        ]
        return found[0] if found else None

    event = await wait_for(refused, timeout=10, what="the third pod's claim is refused")
    assert (
        "exceeded quota: gpus, requested: " + DEVICES + "=1, used: " + DEVICES + "=2"
        in (event["message"])
    )
    assert (await admin.get(kinds.PODS, "third", "default"))["status"]["phase"] == "Pending"
    assert (await _used(admin))[DEVICES] == "2"

    await admin.delete(kinds.PODS, "first", "default", grace_period_seconds=0)

    await wait_for(lambda: _running(admin, "third"), timeout=30, what="third runs")
    used = await _used(admin)
    assert used[DEVICES] == "2"
    assert used["count/pods"] == "2"
    claims = (await admin.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
    assert sorted(meta.owner_references(c)[0]["name"] for c in claims) == ["second", "third"]
