"""The objects a simulated node writes: its Node, its Lease, and its pods' status.

Pure functions of their inputs (time comes in as a string), so they are easy to test and the
kubelet code stays about decisions rather than dict shapes.
"""

from __future__ import annotations

import hashlib

from draplane.api import meta
from draplane.api.auth import NODE_LEASE_NAMESPACE
from draplane.api.meta import Obj

HOSTNAME_LABEL = "kubernetes.io/hostname"
LEASE_NAMESPACE = NODE_LEASE_NAMESPACE
LEASE_DURATION_SECONDS = 40
KUBELET_VERSION = "v1.28.0-draplane"
CAPACITY = {"cpu": "4", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def node_ip(index: int) -> str:
    return f"172.18.{index // 250}.{index % 250 + 2}"


def pod_ip(index: int, serial: int) -> str:
    """Address `serial` of node `index`'s pod CIDR 10.<...>.0/24 (recycles after 253)."""
    return f"10.{244 + index // 256}.{index % 256}.{serial % 253 + 2}"


def node_object(name: str, *, index: int, now: str) -> Obj:
    return {
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
        "spec": {"podCIDR": f"10.{244 + index // 256}.{index % 256}.0/24"},
        "status": node_status(name, index=index, now=now),
    }


def node_status(name: str, *, index: int, now: str) -> Obj:
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
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
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


def _container_id(pod: Obj, container: str) -> str:
    digest = hashlib.sha256(f"{meta.uid(pod)}/{container}".encode()).hexdigest()
    return "containerd://" + digest


def _conditions(*, ready: bool, now: str, reason: str = "") -> list[Obj]:
    out: list[Obj] = []
    for type_ in ("Initialized", "Ready", "ContainersReady", "PodScheduled"):
        value = ready or type_ in ("Initialized", "PodScheduled")
        cond: Obj = {
            "type": type_,
            "status": "True" if value else "False",
            "lastProbeTime": None,
            "lastTransitionTime": now,
        }
        if not value and reason:
            cond["reason"] = reason
        out.append(cond)
    return out


def running_status(pod: Obj, *, now: str, host_ip: str, ip: str) -> Obj:
    """The pod's status once its containers run; resourceClaimStatuses are carried over."""
    status = meta.deep_copy(pod.get("status") or {})
    status.update(
        phase="Running",
        conditions=_conditions(ready=True, now=now),
        hostIP=host_ip,
        hostIPs=[{"ip": host_ip}],
        podIP=ip,
        podIPs=[{"ip": ip}],
        startTime=now,
        containerStatuses=[
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": c.get("image", ""),
                "containerID": _container_id(pod, c.get("name", "")),
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
                "lastState": {},
            }
            for c in (pod.get("spec") or {}).get("containers") or []
        ],
    )
    return status


def succeeded_status(pod: Obj, *, now: str) -> Obj:
    """Every container exited 0."""
    return terminated_status(pod, now=now, started=True)


def terminated_status(pod: Obj, *, now: str, started: bool) -> Obj:
    """The terminal status of a pod whose containers stopped: they exited 0 (Succeeded) if
    they had started, else kubelet's ContainerStatusUnknown termination, exit code 137
    (Failed)."""
    status = meta.deep_copy(pod.get("status") or {})
    started_at = status.get("startTime") or now
    terminated: Obj = (
        {"exitCode": 0, "reason": "Completed", "startedAt": started_at}
        if started
        else {
            "exitCode": 137,
            "reason": "ContainerStatusUnknown",
            "message": "The container could not be located when the pod was terminated",
        }
    )
    status.update(
        phase="Succeeded" if started else "Failed",
        conditions=_conditions(
            ready=False, now=now, reason="PodCompleted" if started else "PodFailed"
        ),
        containerStatuses=[
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": c.get("image", "") if started else "",
                "containerID": _container_id(pod, c.get("name", "")) if started else "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        **terminated,
                        "finishedAt": now,
                        **(
                            {"containerID": _container_id(pod, c.get("name", ""))}
                            if started
                            else {}
                        ),
                    }
                },
                "lastState": {},
            }
            for c in (pod.get("spec") or {}).get("containers") or []
        ],
    )
    return status
