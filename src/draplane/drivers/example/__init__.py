"""The example DRA driver `driver.example.com`: the e2e test driver's allocation model.

`ExampleDriver` is the control-plane half (run it under a `DriverController`);
`ExampleNodePlugin` (built by `node_plugin_factory`) is the node half.
"""

from draplane.drivers.example._allocator import (
    AllocationError,
    Allocator,
    Grant,
    Resources,
)
from draplane.drivers.example._driver import (
    CLAIM_PARAMETERS,
    CLASS_PARAMETERS,
    DRIVER_NAME,
    ExampleDriver,
    ParametersError,
)
from draplane.drivers.example._nodeplugin import (
    CDI_KIND,
    ExampleNodePlugin,
    PreparedClaim,
    PrepareError,
    node_plugin_factory,
)
from draplane.drivers.example._run import example_controller

__all__ = [
    "CDI_KIND",
    "CLAIM_PARAMETERS",
    "CLASS_PARAMETERS",
    "DRIVER_NAME",
    "AllocationError",
    "Allocator",
    "ExampleDriver",
    "ExampleNodePlugin",
    "Grant",
    "ParametersError",
    "PrepareError",
    "PreparedClaim",
    "Resources",
    "example_controller",
    "node_plugin_factory",
]
