"""Built-in kinds served at a version other than the one they are stored at: which they are,
the type they are stored as, and the conversion between the two (kube-apiserver's storage
version and its conversion functions).

Two families: resource.k8s.io's structured-parameters kinds, stored at v1 and served at
v1beta1 and v1beta2 too (`resourceconversion`), and events.k8s.io/v1 Events, stored as core/v1
Events (`eventconversion`). The registry writes a converted version as its storage type and
converts every answer, list and watch event back.
"""

from __future__ import annotations

from typing import Any

from draplane.api import eventconversion, kinds, resourceconversion
from draplane.api.kinds import ResourceType


def converts(rt: ResourceType) -> bool:
    """True for a served version whose objects are stored as another type."""
    return resourceconversion.converts(rt) or eventconversion.converts(rt)


def storage_type(rt: ResourceType) -> ResourceType:
    """The type `rt`'s objects are stored as."""
    if eventconversion.converts(rt):
        return kinds.EVENTS
    return resourceconversion.storage_type(rt)


def convert(obj: Any, rt: ResourceType) -> Any:
    """`obj` (an object or a list of `rt`'s resource, at any of its versions) as `rt`'s
    version serves it; anything else is returned as is."""
    if rt.resource == kinds.EVENTS.resource and rt.group in (kinds.CORE, kinds.EVENTS_GROUP):
        return eventconversion.convert(obj, rt.api_version)
    return resourceconversion.convert(obj, rt.version)
