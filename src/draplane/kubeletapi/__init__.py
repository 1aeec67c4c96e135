"""The gRPC wire between a kubelet and its plugins, as k8s.io/kubelet/pkg/apis defines it: the
plugin registration service and the DRA plugin service (v1 and v1beta1, the same shape), as
Python modules generated from the `.proto` files beside this one (`make protos`), plus the
names both sides agree on and the CDI spec files (`draplane.kubeletapi.cdi`).

Both the simulated nodes (the kubelet side) and `draplane.kubeletplugin` (the plugin side)
import this package; it imports nothing else of draplane.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from draplane.kubeletapi import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    dra_v1beta1_pb2,
    dra_v1beta1_pb2_grpc,
    pluginregistration_pb2,
    pluginregistration_pb2_grpc,
)

DRA_PLUGIN_TYPE = "DRAPlugin"
"""`PluginInfo.type` of a DRA kubelet plugin."""
DRA_SERVICES = ("v1.DRAPlugin", "v1beta1.DRAPlugin")
"""The DRA gRPC services a draplane node speaks, newest first (`PluginInfo.supported_versions`
entries)."""
REGISTRY_DIR = "plugins_registry"
"""The directory of registration sockets under a node's kubelet directory."""
PLUGINS_DIR = "plugins"
"""The plugins' own data directories (`plugins/<driver>/dra.sock`) under a kubelet directory."""
CDI_DIR = "cdi"
"""The CDI spec directory of a node (the runtime's /var/run/cdi) under its kubelet directory."""
KUBECONFIG = "kubeconfig"
"""The node's kubeconfig (its `system:node:<name>` identity) in its kubelet directory."""
DEFAULT_TIMEOUT = 45.0
"""Seconds a kubelet waits for a NodePrepareResources or NodeUnprepareResources call."""

registration: Any = pluginregistration_pb2
registration_grpc: Any = pluginregistration_pb2_grpc


def dra_modules(service: str) -> tuple[Any, Any]:
    """The message and stub modules of a DRA service name (`v1.DRAPlugin`)."""
    return _DRA[service]


_DRA: dict[str, tuple[ModuleType, ModuleType]] = {
    "v1.DRAPlugin": (dra_v1_pb2, dra_v1_pb2_grpc),
    "v1beta1.DRAPlugin": (dra_v1beta1_pb2, dra_v1beta1_pb2_grpc),
}
