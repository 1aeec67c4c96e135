"""The example DRA driver `driver.example.com`: the e2e test driver's allocation model.

`ExampleDriver` is the control-plane half (run it under a `DriverController`);
`ExampleNodePlugin` (built by `node_plugin_factory`) is the node half. In structured mode
(resource.k8s.io/v1) there is no allocating controller: `StructuredNodePlugin` (built by
`structured_node_plugin_factory`) publishes each node's ResourceSlices and prepares from the
allocation, `publish_network_pool` publishes the network-attached pool.
"""

from draplane.drivers.example._allocator import (
    AllocationError,
    Allocator,
    Grant,
    Resources,
)
from draplane.drivers.example._devices import (
    DEVICE_CLASS_NAME,
    NETWORK_POOL,
    DeviceProfile,
    device_class,
    network_slice_specs,
    node_slice_specs,
)
from draplane.drivers.example._driver import (
    CLAIM_PARAMETERS,
    CLASS_PARAMETERS,
    DRIVER_NAME,
    ExampleDriver,
    ParametersError,
)
from draplane.drivers.example._kubeletplugin import ExampleKubeletPlugin, KubeletPluginRunner
from draplane.drivers.example._nodeplugin import (
    CDI_KIND,
    ExampleNodePlugin,
    PreparedClaim,
    PrepareError,
    node_plugin_factory,
)
from draplane.drivers.example._plugintoken import StatusClientSource, status_clients
from draplane.drivers.example._run import example_controller
from draplane.drivers.example._structuredplugin import (
    NetworkPoolController,
    SliceSource,
    StructuredNodePlugin,
    publish_network_pool,
    structured_node_plugin_factory,
)
from draplane.kubeletplugin import RESOURCE_SLICES, PublishResult, SlicePublisher

__all__ = [
    "CDI_KIND",
    "CLAIM_PARAMETERS",
    "CLASS_PARAMETERS",
    "DEVICE_CLASS_NAME",
    "DRIVER_NAME",
    "NETWORK_POOL",
    "RESOURCE_SLICES",
    "AllocationError",
    "Allocator",
    "DeviceProfile",
    "ExampleDriver",
    "ExampleKubeletPlugin",
    "ExampleNodePlugin",
    "Grant",
    "KubeletPluginRunner",
    "NetworkPoolController",
    "ParametersError",
    "PrepareError",
    "PreparedClaim",
    "PublishResult",
    "Resources",
    "SlicePublisher",
    "SliceSource",
    "StatusClientSource",
    "StructuredNodePlugin",
    "device_class",
    "example_controller",
    "network_slice_specs",
    "node_plugin_factory",
    "node_slice_specs",
    "publish_network_pool",
    "status_clients",
    "structured_node_plugin_factory",
]
