"""Classic-DRA driver framework: implement `Driver` (and a `NodePlugin`), run `DriverController`.

Third-party drivers use only the names exported here; see docs/writing-a-driver.md.
"""

from draplane.dra.controller._context import RECHECK_DELAY_SECONDS, Delays
from draplane.dra.controller._controller import DRIVER_WORKERS, DriverController, KeyKind, WorkKey
from draplane.dra.controller._interfaces import ClaimAllocation, Driver
from draplane.dra.kubeletplugin import NodePlugin, NodePluginFactory, NodePluginRegistry

__all__ = [
    "DRIVER_WORKERS",
    "RECHECK_DELAY_SECONDS",
    "ClaimAllocation",
    "Delays",
    "Driver",
    "DriverController",
    "KeyKind",
    "NodePlugin",
    "NodePluginFactory",
    "NodePluginRegistry",
    "WorkKey",
]
