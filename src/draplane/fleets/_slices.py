"""What a node of a fleet publishes: the resource.k8s.io/v1 ResourceSlice specs of one driver's
pool on one node (`node_slice_specs`), pure functions of the node type and the node name.

Devices are rendered from their group's templates in order; a partitionable device gets its
own counter set (consumed whole by the device) and one device per placement of each partition
profile. Counter sets go into counters-only slices of at most 8 sets (v1 keeps `devices` and
`sharedCounters` in separate slices of one pool), devices into slices of at most 128, or 64
once any device consumes counters, as the v1 validation limits say.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import cast

from draplane.api.types import CounterSet, Device, DeviceAttribute, ResourceSliceSpec
from draplane.api.types.resource import Counter
from draplane.fleets._model import Attribute, DeviceGroup, FleetError, NodeType, Partition
from draplane.fleets._templates import Template

MAX_DEVICES_PER_SLICE = 128
MAX_DEVICES_WITH_COUNTERS = 64
MAX_COUNTER_SETS_PER_SLICE = 8
_UUID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")  # uuid.NAMESPACE_URL

Values = dict[str, str | int]


def device_uuid(node: str, device: str) -> str:
    """A stable UUID per node and device name (the example driver's fake inventory seeds its
    UUIDs with the node name too)."""
    return str(uuid.uuid5(_UUID_NAMESPACE, f"{node}/{device}"))


def node_slice_specs(node_type: NodeType, driver: str, node_name: str) -> list[ResourceSliceSpec]:
    """The slice specs (without `pool`: the publisher sets it) of `driver`'s pool on node
    `node_name` of type `node_type`; none when the type has no devices of that driver."""
    groups = node_type.drivers.get(driver)
    if not groups:
        return []
    devices: list[Device] = []
    counter_sets: list[CounterSet] = []
    for group in groups:
        for i in range(group.count):
            _group_device(group, i, node_name, devices, counter_sets)
    selection: ResourceSliceSpec = {"driver": driver, "nodeName": node_name}
    specs: list[ResourceSliceSpec] = []
    for start in range(0, len(counter_sets), MAX_COUNTER_SETS_PER_SLICE):
        chunk = counter_sets[start : start + MAX_COUNTER_SETS_PER_SLICE]
        specs.append({**selection, "sharedCounters": chunk})
    size = MAX_DEVICES_WITH_COUNTERS if counter_sets else MAX_DEVICES_PER_SLICE
    for start in range(0, len(devices), size):
        specs.append({**selection, "devices": devices[start : start + size]})
    return specs


def _group_device(
    group: DeviceGroup, i: int, node: str, devices: list[Device], counter_sets: list[CounterSet]
) -> None:
    values: Values = {"i": i, "node": node}
    name = group.name.render(values)
    values["uuid"] = device_uuid(node, name)
    device = _device(name, group.attributes, group.capacity, values)
    if group.allow_multiple_allocations:
        device["allowMultipleAllocations"] = True
    devices.append(device)
    if not group.counters:
        return
    set_name = group.counter_set.render({"i": i, "node": node, "name": name})
    counter_sets.append({"name": set_name, "counters": _counters(group.counters)})
    device["consumesCounters"] = [{"counterSet": set_name, "counters": _counters(group.counters)}]
    parent: Values = {"parent": name, "parent_uuid": values["uuid"], "parent_index": i}
    for partition in group.partitions:
        for j, start in enumerate(partition.placements):
            pvalues: Values = {**values, **parent, "start": start, "j": j}
            devices.append(_partition(partition, pvalues, set_name, group.counters, node))


def _partition(
    partition: Partition, values: Values, set_name: str, counters: Mapping[str, str], node: str
) -> Device:
    name = partition.name.render(values)
    values = {**values, "uuid": device_uuid(node, name)}
    device = _device(name, partition.attributes, partition.capacity, values)
    consumed = _counters(partition.consumes)
    if partition.placement_counter is not None:
        start = int(values["start"])
        for slot in range(start, start + partition.size):
            counter = partition.placement_counter.render({"n": slot})
            if counter not in counters:
                raise FleetError(
                    f"partition {name}: placement counter {counter!r} is not one of its "
                    f"device's counters"
                )
            consumed[counter] = {"value": "1"}
    device["consumesCounters"] = [{"counterSet": set_name, "counters": consumed}]
    return device


def _device(
    name: str, attributes: Mapping[str, Attribute], capacity: Mapping[str, str], values: Values
) -> Device:
    device: Device = {"name": name}
    if attributes:
        device["attributes"] = {
            key: _attribute(key, attribute, values) for key, attribute in attributes.items()
        }
    if capacity:
        device["capacity"] = {key: {"value": value} for key, value in capacity.items()}
    return device


def _attribute(key: str, attribute: Attribute, values: Values) -> DeviceAttribute:
    value = attribute.value
    if isinstance(value, Template):
        text = value.render(values)
        if attribute.type != "int":
            return cast(DeviceAttribute, {attribute.type: text})
        try:
            return {"int": int(text)}
        except ValueError:
            raise FleetError(f"attribute {key}: {text!r} is not an integer") from None
    return cast(DeviceAttribute, {attribute.type: value})


def _counters(quantities: Mapping[str, str]) -> dict[str, Counter]:
    return {key: {"value": value} for key, value in quantities.items()}
