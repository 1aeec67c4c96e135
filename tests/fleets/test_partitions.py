"""nvidia-gpu's MIG partitions through the structured allocator: a partition consumes its
memory slices of the GPU's counter set, so placements that overlap are not allocated together
and a GPU with an allocated partition is not allocated whole."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.dra.structured import AllocatedState, Allocator
from draplane.fleets import load_fleet, node_slice_specs
from draplane.testing.builders import make_node

NODE = "node-0"
DRIVER = "gpu.nvidia.com"


def slices() -> list[dict[str, Any]]:
    fleet = load_fleet("nvidia-gpu")
    specs = node_slice_specs(fleet.node_type(0), DRIVER, NODE)
    pool = {"name": NODE, "generation": 1, "resourceSliceCount": len(specs)}
    return [
        {"metadata": {"name": f"s-{i}"}, "spec": {**s, "pool": pool}} for i, s in enumerate(specs)
    ]


def claim(name: str, device_class: str, count: int, profile: str = "") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class, "count": count}
    if profile:
        expression = f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"
        exactly["selectors"] = [{"cel": {"expression": expression}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}},
    }


def allocate(claims: list[dict[str, Any]], allocated: list[dict[str, Any]]) -> Any:
    classes = {c["metadata"]["name"]: c for c in load_fleet("nvidia-gpu").device_classes}
    allocator = Allocator(
        classes=classes,
        slices=slices(),
        allocated=AllocatedState.from_allocations(allocated),
    )
    return allocator.allocate(make_node(NODE).obj(), claims)


def names(allocation: dict[str, Any]) -> list[str]:
    return [r["device"] for r in allocation["devices"]["results"]]


def test_seven_1g_partitions_fill_a_gpu_and_exclude_it_whole() -> None:
    [migs] = allocate([claim("migs", "mig.nvidia.com", 8, "1g.5gb")], [])
    assert names(migs) == [f"gpu-0-mig-1g5gb-19-{n}" for n in range(7)] + ["gpu-1-mig-1g5gb-19-0"]
    [six] = allocate([claim("six", "gpu.nvidia.com", 6)], [migs])
    assert names(six) == [f"gpu-{i}" for i in range(2, 8)]
    assert allocate([claim("seven", "gpu.nvidia.com", 7)], [migs]) is None


@pytest.mark.parametrize(
    ("profile", "fits"),
    [("3g.20gb", 1), ("4g.20gb", 0), ("2g.10gb", 1), ("1g.10gb", 1)],
)
def test_placements_left_after_a_3g_partition(profile: str, fits: int) -> None:
    """gpu-0 with a 3g.20gb at slices 0-3 keeps slices 4-7: one more 3g.20gb, a 2g.10gb or a
    1g.10gb there, but no 4g.20gb (its only placement starts at 0)."""
    [first] = allocate([claim("first", "mig.nvidia.com", 1, "3g.20gb")], [])
    assert names(first) == ["gpu-0-mig-3g20gb-9-0"]
    found = allocate([claim("next", "mig.nvidia.com", 1, profile)], [first])
    assert found is not None
    on_gpu0 = [d for d in names(found[0]) if d.startswith("gpu-0-")]
    assert len(on_gpu0) == fits
