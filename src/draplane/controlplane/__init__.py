"""The whole control plane in one process, as `draplane up` and `draplane bench` run it."""

from draplane.controlplane.plane import (
    ControlPlane,
    ControlPlaneConfig,
    DriverSpec,
    driver_class,
    ensure_driver_classes,
)

__all__ = [
    "ControlPlane",
    "ControlPlaneConfig",
    "DriverSpec",
    "driver_class",
    "ensure_driver_classes",
]
