"""Fixture `upstream_attributes`: the attribute and capacity names the imitated drivers'
published code sets on their devices (test data read from the upstream sources named here, not
from draplane)."""

from __future__ import annotations

import pytest

EXAMPLE_DRIVER_GPU = frozenset({"index", "uuid", "model", "driverVersion", "memory"})
"""kubernetes-sigs/dra-example-driver internal/profiles/gpu/gpu.go (EnumerateAllPossibleDevices,
commit 0321de723c2b636be021b69f8466b76ca618834d): attributes index, uuid, model, driverVersion;
capacity memory."""

NVIDIA_GPU = frozenset(
    {
        # cmd/gpu-kubelet-plugin/deviceinfo.go (commit 03af824603ff1b1c3c3193cb25cc584690f4785c),
        # GpuInfo.GetDevice and MigDeviceInfo.GetDevice:
        "type",
        "uuid",
        "parentUUID",
        "profile",
        "productName",
        "brand",
        "architecture",
        "cudaComputeCapability",
        "driverVersion",
        "cudaDriverVersion",
        "pcieBusID",
        "addressingMode",
        "resource.kubernetes.io/pcieRoot",  # deviceattribute.StandardDeviceAttributePCIeRoot
        "memory",
        "multiprocessors",
        # the same file in NVIDIA/k8s-dra-driver's earlier versions (MigDeviceInfo: index,
        # parentIndex; GpuInfo: index, minor):
        "index",
        "minor",
        "parentIndex",
    }
)

NVIDIA_COMPUTE_DOMAIN = frozenset({"type", "id"})
"""cmd/compute-domain-kubelet-plugin/deviceinfo.go (commit
0a29b3dafd99c72418982b8af46e387e2df5d30a): channel and daemon devices, attributes type, id."""

PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
"""k8s.io/dynamic-resource-allocation/deviceattribute StandardDeviceAttributePCIeRoot: the
standard attribute drivers share for matchAttribute across drivers."""

DRANET = frozenset({"ifName", "numaNode", "rdma", "pciVendor", "pciDevice", PCIE_ROOT})
"""google/dranet pkg/apis/attributes.go (commit 60e78f53c226dda301d63491d73506c3d80e647d):
AttrInterfaceName, AttrNUMANode, AttrRDMA, AttrPCIVendor, AttrPCIDevice (prefix dra.net)."""

UPSTREAM_ATTRIBUTES: dict[str, dict[str, frozenset[str]]] = {
    "example-driver": {"gpu.example.com": EXAMPLE_DRIVER_GPU},
    "nvidia-gpu": {
        "gpu.nvidia.com": NVIDIA_GPU,
        "compute-domain.nvidia.com": NVIDIA_COMPUTE_DOMAIN,
    },
    "gpu-nic-numa": {"gpu.example.com": EXAMPLE_DRIVER_GPU | {PCIE_ROOT}, "dra.net": DRANET},
}
"""Fleet -> driver -> the names its devices may carry."""


@pytest.fixture
def upstream_attributes() -> dict[str, dict[str, frozenset[str]]]:
    return UPSTREAM_ATTRIBUTES
