"""examples/structured: every manifest's claims allocated by the structured allocator from the
slices the example driver publishes, then prepared by its kubelet plugin (CDI ids, config env)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from draplane.dra.structured import AllocatedState, Allocator
from draplane.drivers.example import (
    DRIVER_NAME,
    DeviceProfile,
    StructuredNodePlugin,
    device_class,
    node_slice_specs,
)
from draplane.testing.builders import make_node

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "structured"
NODE = "node-0"


def manifests(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


def claims_of(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The claims a pod of the example uses: a ResourceClaim as written, a template's spec as
    the claim controller generates it."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        if doc["kind"] == "ResourceClaim":
            out.append({**doc, "metadata": {**doc["metadata"], "uid": "uid-" + doc["kind"]}})
        elif doc["kind"] == "ResourceClaimTemplate":
            md = doc["metadata"]
            out.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {
                        "name": md["name"] + "-x",
                        "namespace": md.get("namespace", "default"),
                    }
                    | {"uid": "uid-" + md["name"]},
                    "spec": doc["spec"]["spec"],
                }
            )
    return out


def slices(profile: DeviceProfile) -> list[dict[str, Any]]:
    specs = node_slice_specs(DRIVER_NAME, NODE, profile)
    return [
        {
            "metadata": {"name": f"{i}-slice"},
            "spec": {
                **s,
                "pool": {"name": NODE, "generation": 1, "resourceSliceCount": len(specs)},
            },
        }
        for i, s in enumerate(specs)
    ]


def allocate(
    name: str, profile: DeviceProfile, allocated: list[dict[str, Any]] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    [cls] = manifests("deviceclass.yaml")
    assert cls == device_class(DRIVER_NAME)
    claims = claims_of(manifests(name))
    allocator = Allocator(
        classes={cls["metadata"]["name"]: cls},
        slices=slices(profile),
        allocated=AllocatedState.from_allocations(allocated or []),
    )
    return claims, allocator.allocate(make_node(NODE).obj(), claims)


def devices(allocation: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["request"], r["device"]) for r in allocation["devices"]["results"]]


@pytest.mark.parametrize(
    ("example", "profile", "expected"),
    [
        pytest.param(
            "pod-with-template-claim.yaml", DeviceProfile(), [("gpu", "gpu-0")], id="model-a100"
        ),
        pytest.param(
            "claim-with-count-and-constraint.yaml",
            DeviceProfile(),
            [("gpus", "gpu-0"), ("gpus", "gpu-1")],
            id="count-match-attribute",
        ),
        pytest.param(
            "first-available.yaml", DeviceProfile(), [("gpu/a100", "gpu-0")], id="first-available"
        ),
        pytest.param(
            "first-available.yaml",
            DeviceProfile(model="H100"),
            [("gpu/h100", "gpu-0")],
            id="first-available-h100",
        ),
        pytest.param(
            "admin-access.yaml",
            DeviceProfile(count=3),
            [("gpus", "gpu-0"), ("gpus", "gpu-1"), ("gpus", "gpu-2")],
            id="admin-access-all",
        ),
        pytest.param(
            "partitionable.yaml",
            DeviceProfile(count=2, partitions=4),
            [("parts", "gpu-0-part-0"), ("parts", "gpu-0-part-1")],
            id="partitions",
        ),
        pytest.param(
            "deployment-with-template-claim.yaml",
            DeviceProfile(),
            [("gpu", "gpu-0")],
            id="deployment",
        ),
        pytest.param(
            "pod-with-claim-requests.yaml",
            DeviceProfile(),
            [("trainer", "gpu-0"), ("monitor", "gpu-1")],
            id="claim-requests",
        ),
    ],
)
def test_example_allocates(
    example: str, profile: DeviceProfile, expected: list[tuple[str, str]]
) -> None:
    _, got = allocate(example, profile)
    assert got is not None
    assert [d for a in got for d in devices(a)] == expected


@pytest.mark.parametrize(
    ("example", "profile"),
    [
        pytest.param("pod-with-template-claim.yaml", DeviceProfile(model="H100"), id="no-a100"),
        pytest.param(
            "claim-with-count-and-constraint.yaml", DeviceProfile(count=1), id="one-device"
        ),
        pytest.param("partitionable.yaml", DeviceProfile(count=2), id="not-partitionable"),
    ],
)
def test_example_does_not_fit(example: str, profile: DeviceProfile) -> None:
    assert allocate(example, profile)[1] is None


def test_partitions_exclude_their_whole_device() -> None:
    """Allocated partitions consume the counter the whole device needs: the next A100 claim
    skips the whole gpu-0 (listed first) and gets gpu-0's next free partition."""
    profile = DeviceProfile(count=2, partitions=4)
    _, first = allocate("partitionable.yaml", profile)
    assert first is not None
    _, whole = allocate("pod-with-template-claim.yaml", profile, allocated=first)
    assert whole is not None and devices(whole[0]) == [("gpu", "gpu-0-part-2")]


async def test_prepare_the_allocated_example() -> None:
    """NodePrepareResources of the count example: a CDI id per device, the claim's opaque
    config as `user_` env and one GPU_DEVICE_<i> per device, idempotent per claim UID."""
    claims, got = allocate("claim-with-count-and-constraint.yaml", DeviceProfile())
    assert got is not None
    claim = {**claims[0], "status": {"allocation": got[0]}}
    plugin = StructuredNodePlugin(node_name=NODE)
    expected = [f"{DRIVER_NAME}/gpu=gpu-0", f"{DRIVER_NAME}/gpu=gpu-1"]
    assert await plugin.prepare(claim) == expected
    assert await plugin.prepare(claim) == expected
    [prepared] = plugin.prepared.values()
    assert [d.env for d in prepared] == [
        {"GPU_DEVICE_0": "gpu-0", "user_mode": "shared"},
        {"GPU_DEVICE_1": "gpu-1", "user_mode": "shared"},
    ]
    await plugin.unprepare(claim)
    assert plugin.prepared == {}
