"""The example driver's devices in structured mode (resource.k8s.io/v1 ResourceSlices).

`DeviceProfile` says what each node offers (count, model, memory, the partitionable layout);
`node_slice_specs()` turns it into the ResourceSlice specs of one node's pool and
`network_slice_specs()` into those of the network-attached pool. Pure functions: publishing them
is `SlicePublisher`'s job.

Devices are named `gpu-<i>` with attributes `index` (int), `uuid` (string), `model` (string),
`driverVersion` (version) and capacity `memory`, as upstream's example driver
(kubernetes-sigs/dra-example-driver) publishes them. The partitionable profile follows the
upstream DRAPartitionableDevices shape (1.35+): one counters-only slice with a counter set
`gpu-<i>-counters` (`memory`) per physical device, and a devices slice with the whole device
`gpu-<i>` and its partitions `gpu-<i>-part-<j>`, each consuming its share of the counter set.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import cast

from draplane.api.meta import Obj
from draplane.api.quantity import bytes_value, parse_quantity
from draplane.api.types import CounterSet, Device, NodeSelector, ResourceSliceSpec

DEVICE_CLASS_NAME = "gpu.example.com"
DRIVER_VERSION = "1.0.0"
NETWORK_POOL = "network-attached"
MAX_DEVICES_PER_SLICE = 128
_UUID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")  # uuid.NAMESPACE_URL


@dataclass(frozen=True)
class DeviceProfile:
    """What one pool offers. `partitions` > 0 makes every device partitionable into that many
    equal parts besides the whole device (they share the device's `memory` counter)."""

    count: int = 8
    model: str = "A100"
    memory: str = "80Gi"
    driver_version: str = DRIVER_VERSION
    partitions: int = 0

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"device count must not be negative, got {self.count}")
        if self.partitions < 0:
            raise ValueError(f"partitions must not be negative, got {self.partitions}")
        parse_quantity(self.memory)  # ValueError for a bad quantity


def _binary(value: int) -> str:
    """Bytes as the largest exact binary suffix: 21474836480 -> `20Gi`."""
    for suffix, factor in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value and value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


def device_class(driver_name: str, name: str = DEVICE_CLASS_NAME) -> Obj:
    """The DeviceClass selecting every device of the driver (what the Helm chart ships)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver_name}"'}}]},
    }


def device_uuid(pool: str, device: str) -> str:
    """A stable `GPU-<uuid>` per pool and device, as the example driver's fake inventory."""
    return f"GPU-{uuid.uuid5(_UUID_NAMESPACE, f'{pool}/{device}')}"


def _device(pool: str, name: str, index: int, profile: DeviceProfile, memory: str) -> Device:
    return {
        "name": name,
        "attributes": {
            "index": {"int": index},
            "uuid": {"string": device_uuid(pool, name)},
            "model": {"string": profile.model},
            "driverVersion": {"version": profile.driver_version},
        },
        "capacity": {"memory": {"value": memory}},
    }


def pool_devices(pool: str, profile: DeviceProfile) -> tuple[list[Device], list[CounterSet]]:
    """(devices, shared counter sets) of one pool."""
    devices: list[Device] = []
    counters: list[CounterSet] = []
    for i in range(profile.count):
        name = f"gpu-{i}"
        whole = _device(pool, name, i, profile, profile.memory)
        if profile.partitions <= 0:
            devices.append(whole)
            continue
        counter_set = f"{name}-counters"
        counters.append({"name": counter_set, "counters": {"memory": {"value": profile.memory}}})
        whole["consumesCounters"] = [
            {"counterSet": counter_set, "counters": {"memory": {"value": profile.memory}}}
        ]
        devices.append(whole)
        part = _binary(bytes_value(profile.memory) // profile.partitions)
        for j in range(profile.partitions):
            partition = _device(pool, f"{name}-part-{j}", i, profile, part)
            partition["attributes"]["partition"] = {"int": j}
            partition["consumesCounters"] = [
                {"counterSet": counter_set, "counters": {"memory": {"value": part}}}
            ]
            devices.append(partition)
    return devices, counters


def _specs(
    driver_name: str, pool: str, selection: ResourceSliceSpec, profile: DeviceProfile
) -> list[ResourceSliceSpec]:
    """Slice specs without pool generation/resourceSliceCount (the publisher sets those)."""
    devices, counters = pool_devices(pool, profile)
    specs: list[ResourceSliceSpec] = []
    if counters:
        specs.append({"driver": driver_name, **selection, "sharedCounters": counters})
    for start in range(0, len(devices), MAX_DEVICES_PER_SLICE):
        chunk = devices[start : start + MAX_DEVICES_PER_SLICE]
        specs.append({"driver": driver_name, **selection, "devices": chunk})
    if not specs:
        specs.append({"driver": driver_name, **selection, "devices": []})
    return specs


def node_slice_specs(
    driver_name: str, node_name: str, profile: DeviceProfile
) -> list[ResourceSliceSpec]:
    """The slices of the pool named after `node_name` (`nodeName` set)."""
    return _specs(driver_name, node_name, {"nodeName": node_name}, profile)


def network_slice_specs(
    driver_name: str, profile: DeviceProfile, *, node_selector: NodeSelector | Obj | None = None
) -> list[ResourceSliceSpec]:
    """The network-attached pool's slices: `allNodes`, or `nodeSelector` when given."""
    selection: ResourceSliceSpec = (
        {"nodeSelector": cast(NodeSelector, node_selector)} if node_selector else {"allNodes": True}
    )
    return _specs(driver_name, NETWORK_POOL, selection, profile)
