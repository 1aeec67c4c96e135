"""A fleet file as typed values: `Fleet` (DeviceClasses, node types, the node mix), `NodeType`
(labels, taints, devices per driver), `DeviceGroup` (N devices from one template, optionally
partitionable through a counter set) and `Partition` (a partition profile and its placements).

`parse_fleet` reads the plain YAML value and raises `FleetError` naming the field
(`nodeTypes[0].drivers[0].devices[1].count: must be a non-negative integer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from draplane.api.quantity import parse_quantity
from draplane.fleets._templates import (
    COUNTER_SET_VARS,
    DEVICE_NAME_VARS,
    DEVICE_VARS,
    PARTITION_NAME_VARS,
    PARTITION_VARS,
    PLACEMENT_VARS,
    Template,
    TemplateError,
)

API_VERSION = "draplane.dev/v1alpha1"
KIND = "Fleet"
ATTRIBUTE_TYPES = ("string", "int", "bool", "version")


class FleetError(ValueError):
    """A fleet file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class Attribute:
    """One attribute template: its type (`string`, `int`, `bool`, `version`) and value."""

    type: str
    value: Template | bool | int


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition profile of a partitionable device: a device per placement start, each
    consuming `consumes` of its parent's counter set and, with `placement_counter`, a counter
    per slot it occupies (`start` to `start + size - 1`, value 1)."""

    name: Template
    placements: tuple[int, ...]
    size: int
    attributes: Mapping[str, Attribute]
    capacity: Mapping[str, str]
    consumes: Mapping[str, str]
    placement_counter: Template | None


@dataclass(frozen=True, slots=True)
class DeviceGroup:
    """`count` devices named by `name` (`{i}` from 0). With `counters` each device gets its own
    counter set (named by `counter_set`), consumes all of it, and offers `partitions`."""

    name: Template
    count: int
    attributes: Mapping[str, Attribute]
    capacity: Mapping[str, str]
    counter_set: Template
    counters: Mapping[str, str]
    partitions: tuple[Partition, ...]
    allow_multiple_allocations: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class NodeType:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, str], ...] = ()
    drivers: Mapping[str, tuple[DeviceGroup, ...]] = field(default_factory=dict)
    """Driver name -> the device groups of its pool on every node of this type."""


@dataclass(frozen=True, slots=True)
class NodeCount:
    node_type: NodeType
    count: int


@dataclass(frozen=True, slots=True)
class Fleet:
    name: str
    description: str
    device_classes: tuple[dict[str, Any], ...]
    """resource.k8s.io/v1 DeviceClass objects, as the drivers' charts ship them."""
    nodes: tuple[NodeCount, ...]
    """The node mix, in order: node i has the type at i modulo the total count."""
    reference: str = ""
    """What `load_fleet` was given (a shipped name, or the file's absolute path)."""

    @property
    def node_types(self) -> tuple[NodeType, ...]:
        unique = {id(n.node_type): n.node_type for n in self.nodes}
        return tuple(unique.values())

    @property
    def drivers(self) -> tuple[str, ...]:
        """Every driver with devices on some node type, in order of appearance."""
        names = (d for t in self.node_types for d in t.drivers)
        return tuple(dict.fromkeys(names))

    @property
    def default_nodes(self) -> int:
        return sum(n.count for n in self.nodes)

    def node_type(self, index: int) -> NodeType:
        """The type of node `index` (the mix repeats when there are more nodes)."""
        position = index % self.default_nodes
        for entry in self.nodes:
            if position < entry.count:
                return entry.node_type
            position -= entry.count
        raise AssertionError("unreachable: counts are positive")


class _Reader:
    """Field access on the plain YAML value, each failure a FleetError with the field path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> FleetError:
        return FleetError(f"{self.source}: {path}: {message}")

    def mapping(self, value: Any, path: str, *, required: bool = False) -> dict[str, Any]:
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            raise self.fail(path, "must be a mapping")
        return value

    def sequence(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, "must be a list")
        return value

    def text(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, "must be a non-empty string")
        return value

    def count(self, value: Any, path: str, *, minimum: int = 0) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise self.fail(path, f"must be an integer of at least {minimum}")
        return value

    def template(self, value: Any, path: str, allowed: frozenset[str]) -> Template:
        try:
            return Template.parse(self.text(value, path), allowed)
        except TemplateError as err:
            raise self.fail(path, str(err)) from None

    def quantities(self, value: Any, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, quantity in self.mapping(value, path).items():
            if isinstance(quantity, dict):
                quantity = quantity.get("value")
            text = str(quantity) if isinstance(quantity, int | str) else ""
            try:
                parse_quantity(text)
            except ValueError:
                raise self.fail(f"{path}.{name}", f"not a quantity: {quantity!r}") from None
            out[str(name)] = text
        return out

    def attributes(self, value: Any, path: str, allowed: frozenset[str]) -> dict[str, Attribute]:
        out: dict[str, Attribute] = {}
        for name, attribute in self.mapping(value, path).items():
            at = f"{path}.{name}"
            typed = self.mapping(attribute, at, required=True)
            if len(typed) != 1 or next(iter(typed)) not in ATTRIBUTE_TYPES:
                raise self.fail(at, f"must have exactly one of {', '.join(ATTRIBUTE_TYPES)}")
            kind, raw = next(iter(typed.items()))
            out[str(name)] = Attribute(
                kind, self._attribute_value(kind, raw, f"{at}.{kind}", allowed)
            )
        return out

    def _attribute_value(
        self, kind: str, raw: Any, path: str, allowed: frozenset[str]
    ) -> Template | bool | int:
        if kind == "bool":
            if not isinstance(raw, bool):
                raise self.fail(path, "must be true or false")
            return raw
        if kind == "int" and isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if kind == "int" and not isinstance(raw, str):
            raise self.fail(path, "must be an integer or a template such as '{i}'")
        return self.template(str(raw), path, allowed)


def parse_fleet(value: Any, *, source: str, name: str, resolve: Callable[[str], Fleet]) -> Fleet:
    """The fleet in `value` (a fleet file's YAML); `resolve(name)` gives the fleet a
    `profile:` entry of the node mix names (whose one node type it contributes, with its
    DeviceClasses)."""
    read = _Reader(source)
    root = read.mapping(value, "(top level)", required=True)
    if root.get("apiVersion") != API_VERSION or root.get("kind") != KIND:
        raise read.fail("apiVersion/kind", f"must be {API_VERSION} / {KIND}")
    metadata = read.mapping(root.get("metadata"), "metadata")
    unknown = set(root) - {"apiVersion", "kind", "metadata", "deviceClasses", "nodeTypes", "nodes"}
    if unknown:
        raise read.fail(", ".join(sorted(unknown)), "unknown field")
    types = {
        t.name: t
        for i, raw in enumerate(read.sequence(root.get("nodeTypes"), "nodeTypes"))
        for t in (_node_type(read, raw, f"nodeTypes[{i}]"),)
    }
    classes = [
        _device_class(read, raw, f"deviceClasses[{i}]")
        for i, raw in enumerate(read.sequence(root.get("deviceClasses"), "deviceClasses"))
    ]
    nodes = _node_mix(read, root.get("nodes"), types, resolve, classes)
    return Fleet(
        name=str(metadata.get("name") or name),
        description=str(metadata.get("description") or ""),
        device_classes=tuple(classes),
        nodes=nodes,
    )


def meta_name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _device_class(read: _Reader, raw: Any, path: str) -> dict[str, Any]:
    obj = dict(read.mapping(raw, path, required=True))
    metadata = read.mapping(obj.get("metadata"), f"{path}.metadata", required=True)
    read.text(metadata.get("name"), f"{path}.metadata.name")
    obj.setdefault("apiVersion", "resource.k8s.io/v1")
    obj.setdefault("kind", "DeviceClass")
    if obj["apiVersion"] != "resource.k8s.io/v1" or obj["kind"] != "DeviceClass":
        raise read.fail(path, "must be a resource.k8s.io/v1 DeviceClass")
    return obj


def _node_mix(
    read: _Reader,
    raw: Any,
    types: dict[str, NodeType],
    resolve: Callable[[str], Fleet],
    classes: list[dict[str, Any]],
) -> tuple[NodeCount, ...]:
    entries = read.sequence(raw, "nodes")
    if not entries:
        if len(types) != 1:
            raise read.fail("nodes", "required unless the fleet has exactly one node type")
        return (NodeCount(next(iter(types.values())), 1),)
    out: list[NodeCount] = []
    for i, entry in enumerate(entries):
        at = f"nodes[{i}]"
        item = read.mapping(entry, at, required=True)
        count = read.count(item.get("count", 1), f"{at}.count", minimum=1)
        if "profile" in item:
            try:
                other = resolve(read.text(item["profile"], f"{at}.profile"))
            except FleetError as err:
                raise read.fail(f"{at}.profile", str(err)) from None
            if len(other.node_types) != 1:
                raise read.fail(f"{at}.profile", f"fleet {other.name} has several node types")
            out.append(NodeCount(other.node_types[0], count))
            known = {meta_name(c) for c in classes}
            classes.extend(c for c in other.device_classes if meta_name(c) not in known)
            continue
        name = read.text(item.get("type"), f"{at}.type")
        if name not in types:
            raise read.fail(f"{at}.type", f"no node type {name!r} (have: {', '.join(types)})")
        out.append(NodeCount(types[name], count))
    return tuple(out)


def _node_type(read: _Reader, raw: Any, path: str) -> NodeType:
    item = read.mapping(raw, path, required=True)
    labels = read.mapping(item.get("labels"), f"{path}.labels")
    taints = tuple(
        read.mapping(t, f"{path}.taints[{i}]", required=True)
        for i, t in enumerate(read.sequence(item.get("taints"), f"{path}.taints"))
    )
    drivers: dict[str, tuple[DeviceGroup, ...]] = {}
    for i, entry in enumerate(read.sequence(item.get("drivers"), f"{path}.drivers")):
        at = f"{path}.drivers[{i}]"
        driver = read.mapping(entry, at, required=True)
        name = read.text(driver.get("driver"), f"{at}.driver")
        if name in drivers:
            raise read.fail(f"{at}.driver", f"driver {name!r} listed twice")
        groups = read.sequence(driver.get("devices"), f"{at}.devices")
        drivers[name] = tuple(
            _device_group(read, g, f"{at}.devices[{j}]") for j, g in enumerate(groups)
        )
    return NodeType(
        name=read.text(item.get("name"), f"{path}.name"),
        labels={str(k): str(v) for k, v in labels.items()},
        taints=taints,
        drivers=drivers,
    )


def _device_group(read: _Reader, raw: Any, path: str) -> DeviceGroup:
    item = read.mapping(raw, path, required=True)
    counters = read.quantities(item.get("counters"), f"{path}.counters")
    partitions = tuple(
        _partition(read, p, f"{path}.partitions[{i}]")
        for i, p in enumerate(read.sequence(item.get("partitions"), f"{path}.partitions"))
    )
    if partitions and not counters:
        raise read.fail(f"{path}.partitions", "need `counters` on the device to consume from")
    for i, partition in enumerate(partitions):
        missing = sorted(set(partition.consumes) - set(counters))
        if missing:
            raise read.fail(
                f"{path}.partitions[{i}].consumes",
                f"counters {', '.join(missing)} are not in the device's `counters`",
            )
    return DeviceGroup(
        name=read.template(item.get("name"), f"{path}.name", DEVICE_NAME_VARS),
        count=read.count(item.get("count", 1), f"{path}.count"),
        attributes=read.attributes(item.get("attributes"), f"{path}.attributes", DEVICE_VARS),
        capacity=read.quantities(item.get("capacity"), f"{path}.capacity"),
        counter_set=read.template(
            item.get("counterSet", "{name}-counter-set"), f"{path}.counterSet", COUNTER_SET_VARS
        ),
        counters=counters,
        partitions=partitions,
        allow_multiple_allocations=item.get("allowMultipleAllocations") is True,
    )


def _partition(read: _Reader, raw: Any, path: str) -> Partition:
    item = read.mapping(raw, path, required=True)
    placements = read.sequence(item.get("placements"), f"{path}.placements")
    starts = tuple(read.count(p, f"{path}.placements[{i}]") for i, p in enumerate(placements))
    if not starts:
        raise read.fail(f"{path}.placements", "must list at least one placement start")
    capacity = read.quantities(item.get("capacity"), f"{path}.capacity")
    counter = item.get("placementCounter")
    return Partition(
        name=read.template(item.get("name"), f"{path}.name", PARTITION_NAME_VARS),
        placements=starts,
        size=read.count(item.get("size", 1), f"{path}.size", minimum=1),
        attributes=read.attributes(item.get("attributes"), f"{path}.attributes", PARTITION_VARS),
        capacity=capacity,
        consumes=read.quantities(item["consumes"], f"{path}.consumes")
        if "consumes" in item
        else capacity,
        placement_counter=None
        if counter is None
        else read.template(counter, f"{path}.placementCounter", PLACEMENT_VARS),
    )
