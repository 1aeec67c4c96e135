"""The example-driver instances a control plane runs (`DriverSpec`), and what the cluster
holds for each: its class in the mode (`driver_class`) and the binding of its controller's
service account (`ensure_driver_classes`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from draplane.api import errors, kinds, versions
from draplane.api.meta import Obj
from draplane.apiserver.authorization.bootstrap import DRIVER_CONTROLLER_ROLE
from draplane.client.interface import Client
from draplane.drivers.example import DEVICE_CLASS_NAME, DeviceProfile, device_class


@dataclass(frozen=True)
class DriverSpec:
    """One example-driver instance: its name, the ResourceClass pointing at it, its devices."""

    name: str = "driver.example.com"
    resource_class: str = "example"
    devices_per_node: int = 8
    network_attached: int = 0
    shareable: bool = False
    device_class: str = DEVICE_CLASS_NAME
    """Structured mode: the DeviceClass selecting the driver's devices."""
    device_model: str = "A100"
    device_memory: str = "80Gi"
    partitions: int = 0
    """Structured mode: partitions per device (0: not partitionable)."""

    def has_controller(self, mode: versions.Mode) -> bool:
        """Whether a controller side runs for the driver: classic DRA's allocates; with
        structured parameters the nodes publish their own pools, so only a network-attached
        pool has one."""
        return mode.dra is versions.Dra.CLASSIC or self.network_attached > 0

    def profile(self, *, network: bool = False) -> DeviceProfile:
        """Structured mode: the devices of each node's pool, or of the network-attached pool
        (nodes then have none, as classic's network-attached mode)."""
        if network:
            count = self.network_attached
        else:
            count = 0 if self.network_attached else self.devices_per_node
        return DeviceProfile(
            count=count,
            model=self.device_model,
            memory=self.device_memory,
            partitions=self.partitions,
        )


async def ensure_driver_classes(
    admin: Client, drivers: list[DriverSpec], *, mode: versions.Mode, classes: bool = True
) -> None:
    """Each driver's class in `mode` (`driver_class`; not with `classes=False`), and the
    binding that grants its controller's service account the driver controller role (what a
    driver's deployment manifests hold)."""
    for spec in drivers:
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"system:dra:{spec.name}:controller"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": DRIVER_CONTROLLER_ROLE,
            },
            "subjects": [
                {
                    "kind": "ServiceAccount",
                    "name": f"{spec.name}-controller",
                    "namespace": "kube-system",
                }
            ],
        }
        with contextlib.suppress(errors.StatusError):
            await admin.create(kinds.CLUSTER_ROLE_BINDINGS, binding)
        if classes:
            with contextlib.suppress(errors.StatusError):
                await admin.create(mode.classes, driver_class(spec, mode))


def driver_class(spec: DriverSpec, mode: versions.Mode) -> Obj:
    """The class selecting `spec`'s devices: its ResourceClass (1.28), or its DeviceClass."""
    return _DRIVER_CLASSES[mode.dra](spec)


def _resource_class(spec: DriverSpec) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceClass",
        "metadata": {"name": spec.resource_class},
        "driverName": spec.name,
    }


_DRIVER_CLASSES: dict[versions.Dra, Callable[[DriverSpec], Obj]] = {
    versions.Dra.CLASSIC: _resource_class,
    versions.Dra.STRUCTURED: lambda spec: device_class(spec.name, spec.device_class),
}
