"""A library for the node half of a DRA driver, counterpart of upstream's
k8s.io/dynamic-resource-allocation/kubeletplugin: the driver implements `DRAPlugin`
(prepare and unprepare claims) and a `Helper` runs the kubelet's registration and DRA gRPC
services over Unix sockets in the node's kubelet directory, publishes the node's
ResourceSlices (`SlicePublisher`) with the node's client and writes CDI specs (`CDISpecs`).
"""

from draplane.kubeletplugin._helper import CDISpecs, Helper
from draplane.kubeletplugin._servers import RegistrationStatus
from draplane.kubeletplugin._slices import RESOURCE_SLICES, PublishResult, SlicePublisher
from draplane.kubeletplugin._types import Device, DRAPlugin, NamespacedObject, PrepareResult

__all__ = [
    "RESOURCE_SLICES",
    "CDISpecs",
    "DRAPlugin",
    "Device",
    "Helper",
    "NamespacedObject",
    "PrepareResult",
    "PublishResult",
    "RegistrationStatus",
    "SlicePublisher",
]
