"""Declarations of the resource.k8s.io/v1alpha2 kinds (pkg/registry/resource/*/strategy.go, 1.28):
claims and scheduling contexts drop the `status` sent on create (it starts empty, `{}`); every
DELETE returns the object."""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.api.validation import claimstatus, defaults, resource
from draplane.apiserver import printers
from draplane.apiserver.strategies import ResourceStrategy


def drop_status(obj: Obj) -> None:
    """Create ignores the status sent; the empty status struct is still on the wire."""
    obj["status"] = {}


STRATEGIES: tuple[ResourceStrategy, ...] = (
    ResourceStrategy(
        kinds.RESOURCE_CLASSES,
        validate=resource.validate_class,
        validate_update=resource.validate_class_update,
        printer=printers.RESOURCE_CLASS,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIMS,
        validate=resource.validate_claim,
        validate_update=resource.validate_claim_update,
        validate_status=claimstatus.validate_claim_status_update,
        defaults=defaults.default_claim,
        printer=printers.RESOURCE_CLAIM_V1ALPHA2,
        prepare_for_create=drop_status,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIM_TEMPLATES,
        validate=resource.validate_claim_template,
        validate_update=resource.validate_claim_template_update,
        defaults=defaults.default_template,
        printer=printers.RESOURCE_CLAIM_TEMPLATE_V1ALPHA2,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.POD_SCHEDULING_CONTEXTS,
        validate=resource.validate_scheduling_context,
        validate_update=resource.validate_scheduling_context_update,
        validate_status=resource.validate_scheduling_context_status_update,
        defaults=defaults.default_scheduling_context,
        printer=printers.POD_SCHEDULING_CONTEXT,
        prepare_for_create=drop_status,
        delete_returns_object=True,
    ),
)
