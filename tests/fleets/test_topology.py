"""gpu-nic-numa's topology attributes through the structured allocator: GPU-NIC pairs on one
PCIe root (`matchAttribute: resource.kubernetes.io/pcieRoot`, across the two drivers) and NICs
on one NUMA node (`matchAttribute: dra.net/numaNode`), which holds four NICs."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.dra.structured import AllocatedState, Allocator
from draplane.fleets import load_fleet, node_slice_specs
from draplane.testing.builders import make_node

NODE = "node-0"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"


def devices_by_name() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    fleet = load_fleet("gpu-nic-numa")
    slices, devices = [], {}
    for driver in fleet.drivers:
        specs = node_slice_specs(fleet.node_type(0), driver, NODE)
        pool = {"name": NODE, "generation": 1, "resourceSliceCount": len(specs)}
        for i, spec in enumerate(specs):
            slices.append({"metadata": {"name": f"{driver}-{i}"}, "spec": {**spec, "pool": pool}})
            devices.update({d["name"]: d for d in spec["devices"]})
    return slices, devices


def paired_claim(pairs: int) -> dict[str, Any]:
    requests, constraints = [], []
    for i in range(pairs):
        requests += [
            {"name": f"gpu-{i}", "exactly": {"deviceClassName": "gpu.example.com"}},
            {"name": f"nic-{i}", "exactly": {"deviceClassName": "dranet"}},
        ]
        constraints.append({"requests": [f"gpu-{i}", f"nic-{i}"], "matchAttribute": PCIE_ROOT})
    nics = [f"nic-{i}" for i in range(pairs)]
    constraints.append({"requests": nics, "matchAttribute": "dra.net/numaNode"})
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "pairs", "namespace": "default", "uid": "uid-pairs"},
        "spec": {"devices": {"requests": requests, "constraints": constraints}},
    }


@pytest.mark.parametrize(("pairs", "fits"), [(2, True), (4, True), (5, False)])
def test_gpu_nic_pairs_on_one_numa_node(pairs: int, fits: bool) -> None:
    slices, devices = devices_by_name()
    classes = {c["metadata"]["name"]: c for c in load_fleet("gpu-nic-numa").device_classes}
    allocator = Allocator(classes=classes, slices=slices, allocated=AllocatedState())
    found = allocator.allocate(make_node(NODE).obj(), [paired_claim(pairs)])
    if not fits:
        assert found is None
        return
    assert found is not None
    chosen = {r["request"]: devices[r["device"]] for r in found[0]["devices"]["results"]}
    for i in range(pairs):
        gpu, nic = chosen[f"gpu-{i}"], chosen[f"nic-{i}"]
        assert gpu["attributes"][PCIE_ROOT] == nic["attributes"][PCIE_ROOT]
    numa = {chosen[f"nic-{i}"]["attributes"]["numaNode"]["int"] for i in range(pairs)}
    assert len(numa) == 1
