"""The objects a simulated node writes: its Node and its Lease (pod status: `_podstatus`).

Pure functions of their inputs (time comes in as a string), so they are easy to test and the
kubelet code stays about decisions rather than dict shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from draplane.api import meta
from draplane.api.auth import NODE_LEASE_NAMESPACE
from draplane.api.meta import Obj
from draplane.api.types import Node, NodeStatus, Taint

HOSTNAME_LABEL = "kubernetes.io/hostname"
LEASE_NAMESPACE = NODE_LEASE_NAMESPACE
LEASE_DURATION_SECONDS = 40
KUBELET_VERSION = "v1.28.0"
"""The default `status.nodeInfo.kubeletVersion`: a node reports the version of the API server
it joins (`/version`'s gitVersion, as a kubelet of the control plane's release does)."""
CAPACITY = {"cpu": "4", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def node_ip(index: int) -> str:
    return f"172.18.{index // 250}.{index % 250 + 2}"


def _pod_network(index: int) -> str:
    """The first three octets of node `index`'s pod CIDR: 10.244.0.0/24 for node 0, one /24
    per node upwards, wrapping from 10.255.255.0/24 to 10.0.0.0/24 (unique for 65,536 nodes)."""
    block = 244 * 256 + index
    return f"10.{block // 256 % 256}.{block % 256}"


def pod_cidr(index: int) -> str:
    return f"{_pod_network(index)}.0/24"


def pod_ip(index: int, serial: int) -> str:
    """Address `serial` of node `index`'s pod CIDR (recycles after 253)."""
    return f"{_pod_network(index)}.{serial % 253 + 2}"


@dataclass(frozen=True)
class NodeShape:
    """What a node registers with beyond the defaults: more labels and `spec.taints`."""

    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, str], ...] = ()


PLAIN = NodeShape()


def node_object(
    name: str,
    *,
    index: int,
    now: str,
    kubelet_version: str = KUBELET_VERSION,
    shape: NodeShape = PLAIN,
) -> Obj:
    node: Node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                HOSTNAME_LABEL: name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
            },
        },
        "spec": {"podCIDR": pod_cidr(index)},
        "status": node_status(name, index=index, now=now, kubelet_version=kubelet_version),
    }
    node["metadata"]["labels"] = {**shape.labels, **node["metadata"]["labels"]}
    if shape.taints:
        node["spec"]["taints"] = [cast(Taint, dict(t)) for t in shape.taints]
    return cast(Obj, node)


def node_status(
    name: str, *, index: int, now: str, kubelet_version: str = KUBELET_VERSION
) -> NodeStatus:
    return {
        "capacity": dict(CAPACITY),
        "allocatable": dict(CAPACITY),
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
        ],
        "addresses": [
            {"type": "InternalIP", "address": node_ip(index)},
            {"type": "Hostname", "address": name},
        ],
        "nodeInfo": {
            "kubeletVersion": kubelet_version,
            "kubeProxyVersion": kubelet_version,
            "containerRuntimeVersion": "draplane://simulated",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "osImage": "draplane simulated node",
            "kernelVersion": "",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
        },
    }


def lease_object(node: Obj, *, renew_time: str) -> Obj:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": meta.name(node),
            "namespace": LEASE_NAMESPACE,
            "ownerReferences": [meta.owner_reference(node, controller=False)],
        },
        "spec": {
            "holderIdentity": meta.name(node),
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": renew_time,
        },
    }
