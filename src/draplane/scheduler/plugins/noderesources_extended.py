"""NodeResourcesFit for extended resources (names with a prefix, `example.com/gpu`): a pod's
request must fit the node's allocatable minus what its pods request, except where DRA serves it
(DRAExtendedResource): a resource some DeviceClass serves that the node's allocatable lacks is
left to DynamicResources, as upstream's fit consults the device-class mapping.

Only pods requesting such resources pay for the check: their requests are computed once per
pod (`PodInfo.scalar_requests`), the node's allocatable and its pods' sum when the node or its
pods change (`NodeInfo.allocatable_scalar`, `NodeInfo.requested_scalar`).
"""

from __future__ import annotations

from collections.abc import Mapping

from draplane.dra import extended
from draplane.dra.resourcev1 import DEVICE_CLASSES
from draplane.scheduler.framework import Handle, Lister, NodeInfo, PodInfo
from draplane.scheduler.framework.types import scalar_requests

__all__ = ["device_classes", "insufficient", "scalar_requests"]


def device_classes(handle: Handle) -> Lister | None:
    """The DeviceClass lister in the 1.36 mode; None where DRA serves no classes (or a
    handle without listers)."""
    listers = getattr(handle, "listers", None)
    return listers.get(DEVICE_CLASSES) if listers is not None else None


def insufficient(pod_info: PodInfo, node_info: NodeInfo, classes: Lister | None) -> list[str]:
    """`Insufficient <name>` for each prefixed resource that does not fit and DRA does not
    serve on the node."""
    wanted = pod_info.scalar_requests
    if not wanted:
        return []
    allocatable = node_info.allocatable_scalar
    used = node_info.requested_scalar
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
