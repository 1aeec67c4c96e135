"""Shared scheduler vocabulary: cluster events and queueing hints (1.28 names), pod and node info.

`PodInfo` and `NodeInfo` precompute what Filter and Score read on every node (requests,
allocatable, taints, labels), so the per-node work in a scheduling cycle is plain attribute
access. Objects they wrap are informer objects: read-only.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.quantity import bytes_value, cpu_millis, parse_quantity
from draplane.api.types import Node, Pod


class ActionType(enum.IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE = 60
    ALL = 63


class GVK:
    """Resource names used in ClusterEvents (framework.GVK in 1.28: no ResourceClass yet)."""

    POD = "Pod"
    NODE = "Node"
    POD_SCHEDULING_CONTEXT = "PodSchedulingContext"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action_type: ActionType
    label: str = ""

    @property
    def is_wildcard(self) -> bool:
        return self.resource == GVK.WILDCARD and self.action_type == ActionType.ALL

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this incoming event is covered by a registered one."""
        return registered.is_wildcard or (
            registered.resource == self.resource and bool(registered.action_type & self.action_type)
        )


UNSCHEDULABLE_TIMEOUT = ClusterEvent(GVK.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
WILDCARD_EVENT = ClusterEvent(GVK.WILDCARD, ActionType.ALL, "WildCardEvent")


class QueueingHint(enum.IntEnum):
    """1.28 names; ordered so that max() picks the strongest."""

    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


QueueingHintFn = Callable[[Obj, Any, Any], QueueingHint]
"""(pod, old object or None on add, new object or None on delete) -> hint."""


@dataclass(frozen=True, slots=True)
class PodSelector:
    """Which queued pods a queueing hint can ever requeue, so that the queue only asks those.

    A promise of the hint: it returns QueueSkip for every pod whose `pod_keys` do not contain
    the event's `event_key`. `event_key` (old, new) -> key, or None when every pod must be
    asked (e.g. an object of an unexpected type). Keys are plain strings such as
    `namespace/name`.
    """

    pod_keys: Callable[[Obj], Iterable[str]]
    event_key: Callable[[Any, Any], str | None]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None
    """None means "always QueueAfterBackoff"."""
    pod_selector: PodSelector | None = None
    """Set only together with `queueing_hint_fn`; None: the hint may requeue any pod."""


class Resource:
    """Scheduling-relevant amounts: CPU in millicores, memory in bytes, pod count."""

    __slots__ = ("memory", "milli_cpu", "pods")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, pods: int = 0) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.pods = pods

    @classmethod
    def from_list(cls, resources: Obj | None) -> Resource:
        """From a ResourceList (`{"cpu": "4", "memory": "32Gi", "pods": "110"}`)."""
        if not resources:
            return cls()
        cpu = resources.get("cpu")
        memory = resources.get("memory")
        pods = resources.get("pods")
        return cls(
            cpu_millis(str(cpu)) if cpu is not None else 0,
            bytes_value(str(memory)) if memory is not None else 0,
            int(bytes_value(str(pods))) if pods is not None else 0,
        )

    def __repr__(self) -> str:
        return f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, pods={self.pods})"


def pod_requests(pod: Pod | Obj) -> Resource:
    """Effective requests: max(sum over containers, largest init container) plus overhead."""
    spec = meta.pod_spec(pod)
    total = Resource()
    for container in spec.get("containers") or ():
        req = Resource.from_list((container.get("resources") or {}).get("requests"))
        total.milli_cpu += req.milli_cpu
        total.memory += req.memory
    for container in spec.get("initContainers") or ():
        req = Resource.from_list((container.get("resources") or {}).get("requests"))
        total.milli_cpu = max(total.milli_cpu, req.milli_cpu)
        total.memory = max(total.memory, req.memory)
    overhead = Resource.from_list(spec.get("overhead"))
    total.milli_cpu += overhead.milli_cpu
    total.memory += overhead.memory
    return total


def scalar_requests(pod: Pod | Obj) -> dict[str, int]:
    """Effective requests of the pod's prefixed resources (`example.com/gpu`): the larger of
    the containers' sum and the largest init container's, in whole units (upstream's
    ScalarResources)."""
    spec = meta.pod_spec(pod)
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        for name, value in _prefixed((container.get("resources") or {}).get("requests")).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or ():
        for name, value in _prefixed((container.get("resources") or {}).get("requests")).items():
            total[name] = max(total.get(name, 0), value)
    return {name: value for name, value in total.items() if value}


def _prefixed(resources: Mapping[str, Any] | None) -> dict[str, int]:
    """The prefixed (extended) resources of a ResourceList in whole units; unparsable
    amounts are left out."""
    out: dict[str, int] = {}
    for name, value in (resources or {}).items():
        if "/" in name:
            try:
                out[name] = int(parse_quantity(str(value)))
            except ValueError:
                continue
    return out


# Pods without requests still count when spreading by score (kube-scheduler's non-zero defaults).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


class PodInfo:
    """A pod plus what the scheduler derives from it once (spec, requests, priority), so
    that no Filter or Score reads them anew for every node."""

    __slots__ = (
        "key",
        "name",
        "namespace",
        "node_name",
        "non_zero",
        "pod",
        "priority",
        "requests",
        "scalar_requests",
        "spec",
        "uid",
    )

    def __init__(self, pod: Obj) -> None:
        self.pod = pod
        """The informer's pod (untyped: it goes on to the API and the event recorder)."""
        typed = cast(Pod, pod)
        md = meta.metadata(typed)
        self.name: str = md.get("name") or ""
        self.namespace: str = md.get("namespace") or ""
        self.uid: str = md.get("uid") or ""
        self.key = f"{self.namespace}/{self.name}"
        spec: Obj = pod.get("spec") or {}
        self.spec = spec
        """Untyped too: Filter hands its parts to the api layer's matchers as they are."""
        self.node_name: str = spec.get("nodeName") or ""
        self.priority: int = int(spec.get("priority") or 0)
        self.requests = pod_requests(pod)
        self.non_zero = Resource(
            self.requests.milli_cpu or DEFAULT_MILLI_CPU_REQUEST,
            self.requests.memory or DEFAULT_MEMORY_REQUEST,
        )
        self.scalar_requests = scalar_requests(pod)
        """Prefixed (extended) resources only; usually empty."""

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


class NodeInfo:
    """A node and the pods the scheduler counts against it (bound and assumed), with the sums
    Filter and Score compare against, kept up to date as pods come and go."""

    __slots__ = (
        "allocatable",
        "allocatable_scalar",
        "labels",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "requested",
        "requested_scalar",
        "taints",
        "unschedulable",
    )

    def __init__(self, node: Obj) -> None:
        self.pods: dict[str, PodInfo] = {}
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.requested_scalar: dict[str, int] = {}
        """Prefixed (extended) resources the node's pods request."""
        self.set_node(node)

    def set_node(self, node: Obj) -> None:
        self.node = node
        typed = cast(Node, node)
        md = meta.metadata(typed)
        spec = typed.get("spec") or {}
        self.name: str = md.get("name") or ""
        self.labels: dict[str, str] = md.get("labels") or {}
        self.taints: list[Obj] = cast(list[Obj], spec.get("taints") or [])
        self.unschedulable = bool(spec.get("unschedulable"))
        allocatable = (typed.get("status") or {}).get("allocatable")
        self.allocatable = Resource.from_list(allocatable)
        self.allocatable_scalar = _prefixed(allocatable)

    def add_pod(self, pod_info: PodInfo) -> None:
        if pod_info.uid in self.pods:
            self.remove_pod(pod_info.uid)
        self.pods[pod_info.uid] = pod_info
        self.requested.milli_cpu += pod_info.requests.milli_cpu
        self.requested.memory += pod_info.requests.memory
        self.requested.pods += 1
        self.non_zero_requested.milli_cpu += pod_info.non_zero.milli_cpu
        self.non_zero_requested.memory += pod_info.non_zero.memory
        if pod_info.scalar_requests:
            used = self.requested_scalar
            for name, value in pod_info.scalar_requests.items():
                used[name] = used.get(name, 0) + value

    def remove_pod(self, uid: str) -> None:
        pod_info = self.pods.pop(uid, None)
        if pod_info is None:
            return
        self.requested.milli_cpu -= pod_info.requests.milli_cpu
        self.requested.memory -= pod_info.requests.memory
        self.requested.pods -= 1
        self.non_zero_requested.milli_cpu -= pod_info.non_zero.milli_cpu
        self.non_zero_requested.memory -= pod_info.non_zero.memory
        if pod_info.scalar_requests:
            used = self.requested_scalar
            for name, value in pod_info.scalar_requests.items():
                left = used.get(name, 0) - value
                if left:
                    used[name] = left
                else:
                    used.pop(name, None)

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


def unwrap(obj: Any) -> Any:
    """The object of an informer's delete event: a `DeletedFinalStateUnknown` tombstone's
    `obj`, or `obj` itself."""
    inner = getattr(obj, "obj", None)
    return inner if isinstance(inner, dict) else obj


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """A pod in the scheduling queue with its attempt bookkeeping (times are monotonic)."""

    pod_info: PodInfo
    timestamp: float
    """Last time the pod was added or re-added to the queue."""
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    """Rejected by a PreEnqueue plugin: never attempted until an event lets it pass."""

    @property
    def pod(self) -> Obj:
        return self.pod_info.pod

    @property
    def key(self) -> str:
        return self.pod_info.key
