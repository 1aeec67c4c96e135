"""A fleet profile in a control plane: each of its drivers' node plugins publishing what the
node's type offers (`fleet_plugin_factories`) and the profile's DeviceClasses, with each
driver's controller binding, in the cluster (`ensure_fleet_classes`).

Node i (named `<prefix><i>`) has the type at position i of the fleet's node mix; a node of a
type without devices of a driver publishes no slice of that driver.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from draplane.api import errors, meta, versions
from draplane.api.types import ResourceSliceSpec
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock
from draplane.controlplane.drivers import DriverSpec, ensure_driver_classes
from draplane.drivers.example import (
    SliceSource,
    StatusClientSource,
    StructuredNodePlugin,
    structured_node_plugin_factory,
)
from draplane.fleets import Fleet, NodeType, node_slice_specs
from draplane.node import NodeShape

STRUCTURED_ONLY = (
    "fleet profiles publish resource.k8s.io/v1 ResourceSlices: they need Kubernetes 1.36 "
    "(--kubernetes-version 1.36)"
)


def check_mode(fleet: Fleet | None, mode: versions.Mode) -> None:
    """ValueError for a fleet in a mode without structured parameters (1.28)."""
    if fleet is not None and mode.dra is not versions.Dra.STRUCTURED:
        raise ValueError(STRUCTURED_ONLY)


def node_type_of(fleet: Fleet, node_name: str, *, prefix: str) -> NodeType:
    """The type of the node named `<prefix><i>` (a name outside that scheme: the first)."""
    suffix = node_name.removeprefix(prefix)
    index = int(suffix) if suffix.isdigit() else 0
    return fleet.node_type(index)


def fleet_node_shapes(fleet: Fleet | None, *, prefix: str) -> Callable[[str], NodeShape]:
    """The labels and taints each node registers with: its type's (none without a fleet)."""
    if fleet is None:
        return lambda _name: NodeShape()

    def shape(node_name: str) -> NodeShape:
        node_type = node_type_of(fleet, node_name, prefix=prefix)
        return NodeShape(labels=node_type.labels, taints=node_type.taints)

    return shape


def fleet_slices(fleet: Fleet, driver: str, *, prefix: str) -> SliceSource:
    """What `driver`'s node plugin publishes on each node of the fleet."""

    def specs(node_name: str) -> list[ResourceSliceSpec]:
        return node_slice_specs(node_type_of(fleet, node_name, prefix=prefix), driver, node_name)

    return specs


def fleet_plugin_factories(
    fleet: Fleet,
    *,
    prefix: str,
    clock: Clock = REAL_CLOCK,
    status_clients_for: Callable[[str], StatusClientSource | None] = lambda _driver: None,
) -> dict[str, Callable[[str], StructuredNodePlugin]]:
    """Driver name -> the factory of its node plugin (register each in a NodePluginRegistry)."""
    return {
        driver: structured_node_plugin_factory(
            driver,
            clock=clock,
            status_client_for=status_clients_for(driver),
            slices=fleet_slices(fleet, driver, prefix=prefix),
        )
        for driver in fleet.drivers
    }


async def ensure_fleet_classes(admin: Client, fleet: Fleet, *, mode: versions.Mode) -> None:
    """The fleet's DeviceClasses (an existing class of the same name is left as it is) and
    every driver's controller binding, as its chart would install them."""
    check_mode(fleet, mode)
    drivers = [DriverSpec(name=driver) for driver in fleet.drivers]
    await ensure_driver_classes(admin, drivers, mode=mode, classes=False)
    for device_class in fleet.device_classes:
        with contextlib.suppress(errors.StatusError):
            await admin.create(mode.classes, meta.deep_copy(device_class))
