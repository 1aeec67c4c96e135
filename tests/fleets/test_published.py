"""What a control plane started with a fleet holds (1.36, through the real API server): the
profile's DeviceClasses as its chart ships them, and on every node the slices of each driver
its type has (none for a type without that driver); the attribute names are those the
imitated drivers publish (the `upstream_attributes` fixture)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from draplane.api import kinds, versions
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.fleets import Fleet, load_fleet, node_slice_specs

pytestmark = pytest.mark.slow

SLICES = kinds.for_kind("resource.k8s.io/v1", "ResourceSlice")
CLASSES = kinds.for_kind("resource.k8s.io/v1", "DeviceClass")
USER_FLEET = """
apiVersion: draplane.dev/v1alpha1
kind: Fleet
metadata: {name: two-gpu-one-cpu}
nodes:
- {profile: example-driver, count: 2}
- {profile: cpu-only, count: 1}
"""


@dataclass(frozen=True)
class Case:
    fleet: str
    nodes: int
    slices: dict[str, dict[str, int]]
    """Node -> driver -> devices in its pool."""
    counter_sets: int = 0
    """Counter sets per GPU node."""


CASES = [
    pytest.param(
        Case(
            "nvidia-gpu",
            2,
            {
                n: {"gpu.nvidia.com": 8 * 19, "compute-domain.nvidia.com": 2}
                for n in ("node-0", "node-1")
            },
            counter_sets=8,
        ),
        id="nvidia-gpu",
    ),
    pytest.param(
        Case("example-driver", 1, {"node-0": {"gpu.example.com": 8}}), id="example-driver"
    ),
    pytest.param(
        Case(
            "user-file",
            3,
            {"node-0": {"gpu.example.com": 8}, "node-1": {"gpu.example.com": 8}},
        ),
        id="mixed-user-file",
    ),
]


def fleet_for(case: Case, tmp_path: Path) -> Fleet:
    if case.fleet != "user-file":
        return load_fleet(case.fleet)
    path = tmp_path / "fleet.yaml"
    path.write_text(USER_FLEET)
    return load_fleet(str(path))


@pytest.mark.parametrize("case", CASES)
async def test_plane_publishes_the_fleet(case: Case, tmp_path: Path) -> None:
    fleet = fleet_for(case, tmp_path)
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
        classes = (await admin.list(CLASSES))["items"]
        assert sorted(c["metadata"]["name"] for c in classes) == sorted(
            c["metadata"]["name"] for c in fleet.device_classes
        )
        for published in classes:
            [shipped] = [
                c
                for c in fleet.device_classes
                if c["metadata"]["name"] == published["metadata"]["name"]
            ]
            assert published["spec"] == shipped["spec"]
        slices: list[dict[str, Any]] = (await admin.list(SLICES))["items"]
        found: dict[str, Counter[str]] = {}
        counter_sets: Counter[str] = Counter()
        for s in slices:
            spec = s["spec"]
            assert spec["pool"]["name"] == spec["nodeName"]
            assert s["metadata"]["ownerReferences"][0]["kind"] == "Node"
            found.setdefault(spec["nodeName"], Counter())[spec["driver"]] += len(
                spec.get("devices") or []
            )
            counter_sets[spec["nodeName"]] += len(spec.get("sharedCounters") or [])
        assert {n: dict(c) for n, c in found.items()} == case.slices
        assert all(counter_sets[n] == case.counter_sets for n in case.slices)
        for s in slices:
            node = s["spec"]["nodeName"]
            expected = node_slice_specs(fleet.node_type(int(node[5:])), s["spec"]["driver"], node)
            without_pool = {k: v for k, v in s["spec"].items() if k != "pool"}
            assert without_pool in expected
    finally:
        await plane.stop()


@pytest.mark.parametrize("name", ["example-driver", "nvidia-gpu", "gpu-nic-numa"])
def test_attribute_names_are_the_upstream_drivers(
    name: str, upstream_attributes: dict[str, dict[str, frozenset[str]]]
) -> None:
    """Every attribute and capacity a profile publishes is one its driver's code publishes."""
    fleet = load_fleet(name)
    upstream = upstream_attributes[name]
    assert set(upstream) == set(fleet.drivers)
    for node_type in fleet.node_types:
        for driver in node_type.drivers:
            for spec in node_slice_specs(node_type, driver, "node-0"):
                for device in spec.get("devices") or []:
                    names = set(device.get("attributes") or {}) | set(device.get("capacity") or {})
                    assert names <= upstream[driver], (device["name"], names - upstream[driver])


TAINTED_FLEET = """
apiVersion: draplane.dev/v1alpha1
kind: Fleet
metadata: {name: tainted}
nodeTypes:
- name: gpu
  labels: {nvidia.com/gpu.present: "true"}
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
- name: cpu
nodes: [{type: gpu, count: 1}, {type: cpu, count: 1}]
"""


async def test_nodes_register_with_their_types_labels_and_taints(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(TAINTED_FLEET)
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=2,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            fleet=load_fleet(str(path)),
        )
    )
    await plane.start()
    try:
        admin = plane.client()
        gpu_node = await admin.get(kinds.NODES, "node-0")
        cpu_node = await admin.get(kinds.NODES, "node-1")
        assert gpu_node["metadata"]["labels"]["nvidia.com/gpu.present"] == "true"
        assert gpu_node["metadata"]["labels"]["kubernetes.io/hostname"] == "node-0"
        assert gpu_node["spec"]["taints"] == [
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
        ]
        assert "nvidia.com/gpu.present" not in cpu_node["metadata"]["labels"]
        assert not cpu_node["spec"].get("taints")
    finally:
        await plane.stop()
