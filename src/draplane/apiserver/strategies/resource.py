"""Strategies of the resource.k8s.io/v1alpha2 kinds (pkg/registry/resource/*/strategy.go):
claims and scheduling contexts drop the `status` sent on create (it starts empty, `{}`); every
DELETE returns the object."""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.apiserver.strategies import ResourceStrategy


def _drop_status(obj: Obj) -> None:
    """Create ignores the status sent; the empty status struct is still on the wire."""
    obj["status"] = {}


STRATEGIES: tuple[ResourceStrategy, ...] = (
    ResourceStrategy(
        kinds.RESOURCE_CLASSES,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIMS,
        prepare_for_create=_drop_status,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIM_TEMPLATES,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.POD_SCHEDULING_CONTEXTS,
        prepare_for_create=_drop_status,
        delete_returns_object=True,
    ),
)

# resource.k8s.io/v1 (the 1.36 mode; the beta versions are written as v1): a claim's status
# starts empty, every DELETE returns the object (pkg/registry/resource/*/strategy.go).
STRATEGIES = (
    *STRATEGIES,
    ResourceStrategy(kinds.DEVICE_CLASSES, delete_returns_object=True),
    ResourceStrategy(
        kinds.RESOURCE_CLAIMS_V1, prepare_for_create=_drop_status, delete_returns_object=True
    ),
    ResourceStrategy(kinds.RESOURCE_CLAIM_TEMPLATES_V1, delete_returns_object=True),
    ResourceStrategy(kinds.RESOURCE_SLICES, delete_returns_object=True),
    ResourceStrategy(kinds.DEVICE_TAINT_RULES, delete_returns_object=True),
)
