"""The whole control plane in one process, as `draplane up` and `draplane bench` run it."""

from draplane.controlplane.disable import Disabled
from draplane.controlplane.drivers import DriverSpec, driver_class, ensure_driver_classes
from draplane.controlplane.plane import ControlPlane, ControlPlaneConfig

__all__ = [
    "ControlPlane",
    "ControlPlaneConfig",
    "Disabled",
    "DriverSpec",
    "driver_class",
    "ensure_driver_classes",
]
