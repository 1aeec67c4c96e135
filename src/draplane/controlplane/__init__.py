"""The whole control plane in one process, as `draplane up` and `draplane bench` run it."""

from draplane.controlplane.drivers import DriverSpec, driver_class, ensure_driver_classes
from draplane.controlplane.plane import ControlPlane, ControlPlaneConfig

__all__ = [
    "ControlPlane",
    "ControlPlaneConfig",
    "DriverSpec",
    "driver_class",
    "ensure_driver_classes",
]
