"""Simulated nodes (a kubelet per node): registration, lease heartbeats, pod lifecycle, DRA.

Nodes reach each driver's node plugin through a `NodePluginRegistry` in the same process, or,
with a kubelet directory, the kubelet plugins registered with them over gRPC.
"""

from draplane.node._claims import NOT_READY, PREPARE_FAILED
from draplane.node._kubelet import CLAIMS_PREPARED, PodKey
from draplane.node._nodes import LEASE_RENEW_JITTER, LEASE_RENEW_SECONDS, Nodes
from draplane.node._objects import LEASE_NAMESPACE, NodeShape
from draplane.node._pluginmanager import RegistrationError, choose_service
from draplane.node._podstatus import (
    EXIT_CODE_ANNOTATION,
    RUN_SECONDS_ANNOTATION,
    STOP_SECONDS_ANNOTATION,
)

__all__ = [
    "CLAIMS_PREPARED",
    "EXIT_CODE_ANNOTATION",
    "LEASE_NAMESPACE",
    "LEASE_RENEW_JITTER",
    "LEASE_RENEW_SECONDS",
    "NOT_READY",
    "PREPARE_FAILED",
    "RUN_SECONDS_ANNOTATION",
    "STOP_SECONDS_ANNOTATION",
    "NodeShape",
    "Nodes",
    "PodKey",
    "RegistrationError",
    "choose_service",
]
