"""Fleet profiles: the devices and DeviceClasses of a cluster's nodes, shaped like real DRA
drivers publish them, as data files (`data/<name>.yaml`, or a user's file).

`load_fleet(name_or_path)` reads and checks one; `Fleet.node_type(i)` is node i's type in the
fleet's node mix and `node_slice_specs(node_type, driver, node)` the ResourceSlice specs of a
driver's pool on a node. Pure data and functions over `draplane.api`: the control plane and
`draplane nodes` hand them to the example driver's node plugin, which publishes them.
"""

from draplane.fleets._catalog import load_fleet, shipped_fleets
from draplane.fleets._model import API_VERSION, Fleet, FleetError, NodeCount, NodeType
from draplane.fleets._slices import device_uuid, node_slice_specs

__all__ = [
    "API_VERSION",
    "Fleet",
    "FleetError",
    "NodeCount",
    "NodeType",
    "device_uuid",
    "load_fleet",
    "node_slice_specs",
    "shipped_fleets",
]
