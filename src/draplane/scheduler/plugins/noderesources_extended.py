"""NodeResourcesFit for extended resources (names with a prefix, `example.com/gpu`): a pod's
request must fit the node's allocatable minus what its pods request, except where DRA serves it
(DRAExtendedResource): a resource some DeviceClass serves that the node's allocatable lacks is
left to DynamicResources, as upstream's fit consults the device-class mapping.

Only pods requesting such resources pay for the check (the node's pods are summed then).
"""

from __future__ import annotations

from collections.abc import Mapping

from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.dra import extended
from draplane.dra.resourcev1 import DEVICE_CLASSES
from draplane.scheduler.framework import Handle, Lister, NodeInfo, PodInfo


def scalar_requests(pod: Obj) -> dict[str, int]:
    """Effective requests of the pod's prefixed resources: the larger of the containers' sum
    and the largest init container's, in whole units (upstream's ScalarResources)."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        for name, value in _prefixed(container).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or ():
        for name, value in _prefixed(container).items():
            total[name] = max(total.get(name, 0), value)
    return {name: value for name, value in total.items() if value}


def _prefixed(container: Obj) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
        if "/" in name:
            try:
                out[name] = int(parse_quantity(str(value)))
            except ValueError:
                continue
    return out


def device_classes(handle: Handle) -> Lister | None:
    """The DeviceClass lister in the 1.36 mode; None where DRA serves no classes (or a
    handle without listers)."""
    listers = getattr(handle, "listers", None)
    return listers.get(DEVICE_CLASSES) if listers is not None else None


def insufficient(pod_info: PodInfo, node_info: NodeInfo, classes: Lister | None) -> list[str]:
    """`Insufficient <name>` for each prefixed resource that does not fit and DRA does not
    serve on the node."""
    wanted = scalar_requests(pod_info.pod)
    if not wanted:
        return []
    allocatable = _allocatable(node_info.node)
    used: dict[str, int] = {}
    for other in node_info.pods.values():
        for name, value in scalar_requests(other.pod).items():
            used[name] = used.get(name, 0) + value
    mapping: Mapping[str, str] | None = None
    reasons = []
    for name, value in sorted(wanted.items()):
        have = allocatable.get(name, 0)
        if value <= have - used.get(name, 0):
            continue
        if have == 0 and classes is not None:
            if mapping is None:
                mapping = extended.class_mapping(classes.list())
            if name in mapping:
                continue  # DynamicResources allocates it
        reasons.append(f"Insufficient {name}")
    return reasons


def _allocatable(node: Obj) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in ((node.get("status") or {}).get("allocatable") or {}).items():
        if "/" in name:
            try:
                out[name] = int(parse_quantity(str(value)))
            except ValueError:
                continue
    return out
