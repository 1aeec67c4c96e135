"""The demo specs of the drivers the fleet profiles imitate, applied unchanged (the copies in
specs/, each naming its upstream origin) to a control plane started with that fleet: every pod
Running on a node, every claim allocated from the fleet's devices as the demo's README says."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from draplane.api import kinds, meta, versions
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.fleets import load_fleet
from draplane.testing.apistate import wait_for

pytestmark = pytest.mark.slow

SPECS = Path(__file__).parent / "specs"
CLAIMS = kinds.for_kind("resource.k8s.io/v1", "ResourceClaim")
SLICES = kinds.for_kind("resource.k8s.io/v1", "ResourceSlice")


@dataclass(frozen=True)
class Case:
    fleet: str
    spec: str
    namespace: str
    pods: int
    """Pods that must be Running."""
    devices: tuple[tuple[str, int], ...]
    """(request name, devices allocated for it) summed over the namespace's claims."""
    nodes: int = 1


CASES = [
    pytest.param(c, id=f"{c.fleet}/{c.spec}")
    for c in (
        Case("example-driver", "basic-resourceclaimtemplate", "basic-resourceclaimtemplate", 2,
             (("gpu", 2),)),
        Case("example-driver", "basic-shared-claim-across-containers",
             "basic-shared-claim-across-containers", 1, (("gpu", 1),)),
        Case("example-driver", "basic-shared-claim-across-pods",
             "basic-shared-claim-across-pods", 2, (("gpu", 1),)),
        Case("example-driver", "basic-multiple-requests", "basic-multiple-requests", 1,
             (("gpu-1", 1), ("gpu-2", 1))),
        Case("example-driver", "basic-resourceclaim-opaque-config",
             "basic-resourceclaim-opaque-config", 1, (("sp-gpu", 1), ("ts-gpu", 1))),
        Case("example-driver", "cel-selector", "cel-selector", 1, (("gpu", 1),)),
        Case("example-driver", "initcontainer-shared-gpu", "initcontainer-shared-gpu", 1,
             (("gpu", 1),)),
        Case("nvidia-gpu", "gpu-test1", "gpu-test1", 2, (("gpu", 2),)),
        Case("nvidia-gpu", "gpu-test2", "gpu-test2", 1, (("gpu", 1),)),
        Case("nvidia-gpu", "gpu-test3", "gpu-test3", 2, (("gpu", 1),)),
        Case("nvidia-gpu", "gpu-test4", "gpu-test4", 4,
             (("mig-1g-5gb-0", 4), ("mig-1g-5gb-1", 4), ("mig-2g-10gb", 4), ("mig-3g-20gb", 4))),
        Case("nvidia-gpu", "gpu-test-count", "gpu-test1", 1, (("gpu", 2),)),
        Case("nvidia-gpu", "gpu-test7", "gpu-test1", 1, (("gpu", 2),)),
        Case("nvidia-gpu", "gpu-full", "extended-resource-gpu-full", 1,
             (("container-0-request-0", 1),)),
    )
]  # fmt: skip


def documents(case: Case) -> list[dict[str, Any]]:
    path = SPECS / case.fleet / f"{case.spec}.yaml"
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


async def apply(client: Client, docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        rt = kinds.for_kind(doc["apiVersion"], doc["kind"])
        assert rt is not None, f"not served: {doc['apiVersion']} {doc['kind']}"
        await client.create(rt, doc, doc["metadata"].get("namespace", ""))


async def running_pods(client: Client, namespace: str) -> list[dict[str, Any]]:
    pods = (await client.list(kinds.PODS, namespace))["items"]
    return [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]


def device_counts(claims: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for claim in claims:
        results = ((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}
        for result in results.get("results") or []:
            counts[result["request"]] = counts.get(result["request"], 0) + 1
    return counts


@pytest.mark.parametrize("case", CASES)
async def test_demo_spec_runs_unchanged(case: Case, tmp_path: Path) -> None:
    fleet = load_fleet(case.fleet)
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=case.nodes,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            fleet=fleet,
        )
    )
    await plane.start()
    try:
        admin = plane.client()
        await apply(admin, documents(case))

        async def all_running() -> list[dict[str, Any]] | None:
            pods = await running_pods(admin, case.namespace)
            return pods if len(pods) == case.pods else None

        pods = await wait_for(all_running, timeout=60, what=f"{case.pods} pods Running")
        assert all(p["spec"].get("nodeName") for p in pods)
        claims = (await admin.list(CLAIMS, case.namespace))["items"]
        assert device_counts(claims) == dict(case.devices)
        results = [r for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
        distinct = {(r["pool"], r["device"]) for r in results}
        assert len(distinct) == len(results)  # no device handed out twice
        assert {r["driver"] for r in results} <= set(fleet.drivers)
    finally:
        await plane.stop()


async def test_mig_partitions_of_one_pod_share_a_parent_gpu(tmp_path: Path) -> None:
    """gpu-test4: each replica's four MIG devices are partitions of one GPU (matchAttribute
    parentUUID) that fit its memory slices together."""
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=1,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            fleet=load_fleet("nvidia-gpu"),
        )
    )
    await plane.start()
    try:
        admin = plane.client()
        await apply(admin, documents(Case("nvidia-gpu", "gpu-test4", "gpu-test4", 4, ())))

        async def four_running() -> bool:
            return len(await running_pods(admin, "gpu-test4")) == 4

        await wait_for(four_running, timeout=60, what="4 replicas Running")
        devices = {
            d["name"]: d
            for s in (await admin.list(SLICES))["items"]
            for d in s["spec"].get("devices") or []
        }
        parents = []
        for claim in (await admin.list(CLAIMS, "gpu-test4"))["items"]:
            results = claim["status"]["allocation"]["devices"]["results"]
            uuids = {devices[r["device"]]["attributes"]["parentUUID"]["string"] for r in results}
            assert len(uuids) == 1, meta.key(claim)
            parents.append(uuids.pop())
        assert len(set(parents)) == 4  # four GPUs, one per replica
    finally:
        await plane.stop()


async def test_classic_mode_refuses_a_fleet(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"need Kubernetes 1\.36"):
        ControlPlane(
            ControlPlaneConfig(
                data_dir=str(tmp_path / "plane"),
                port=0,
                nodes=1,
                store="memory",
                kubernetes_version=versions.CLASSIC,
                fleet=load_fleet("example-driver"),
            )
        )
