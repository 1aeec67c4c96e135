"""How the scheduler wires DynamicResources in each mode (`versions.Dra`), picked once when the
scheduler is built: the DRA kinds it lists and watches, the informers its event handlers take,
and the plugin's factory (classic DRA's `DynamicResources`, 1.28, or
`StructuredDynamicResources` with its `DynamicResourcesArgs`, 1.36)."""

from __future__ import annotations

from dataclasses import dataclass

from draplane.api import errors, versions
from draplane.api.kinds import (
    DEVICE_CLASSES,
    POD_SCHEDULING_CONTEXTS,
    RESOURCE_CLAIMS,
    RESOURCE_CLAIMS_V1,
    RESOURCE_CLASSES,
    RESOURCE_SLICES,
    ResourceType,
)
from draplane.scheduler.framework.handle import Handle
from draplane.scheduler.framework.interfaces import PluginArgs, PluginFactory
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.dynamicresources import DynamicResources, StructuredDynamicResources
from draplane.scheduler.plugins.dynamicresources.args import parse_args


@dataclass(frozen=True)
class DraWiring:
    kinds: tuple[ResourceType, ...]
    """The DRA kinds whose listers and event sources the plugin's handle gets."""
    handlers: dict[str, ResourceType]
    """`EventHandlers.install` keyword -> the kind whose informer it takes."""
    plugin: PluginFactory
    """The DynamicResources plugin's factory."""


def dra_wiring(mode: versions.Mode) -> DraWiring:
    return _BY_DRA[mode.dra]


def _classic(args: PluginArgs, handle: Handle) -> DynamicResources:
    if args:
        raise errors.invalid_object(
            "DynamicResourcesArgs",
            names.DYNAMIC_RESOURCES,
            [errors.forbidden("args", "DynamicResources takes no arguments")],
        )
    return DynamicResources(handle)


def _structured(args: PluginArgs, handle: Handle) -> StructuredDynamicResources:
    return StructuredDynamicResources(handle, args=parse_args(args))


_BY_DRA = {
    versions.Dra.CLASSIC: DraWiring(
        kinds=(RESOURCE_CLAIMS, RESOURCE_CLASSES, POD_SCHEDULING_CONTEXTS),
        handlers={"claims": RESOURCE_CLAIMS, "contexts": POD_SCHEDULING_CONTEXTS},
        plugin=_classic,
    ),
    versions.Dra.STRUCTURED: DraWiring(
        kinds=(RESOURCE_CLAIMS_V1, DEVICE_CLASSES, RESOURCE_SLICES),
        handlers={
            "claims": RESOURCE_CLAIMS_V1,
            "slices": RESOURCE_SLICES,
            "classes": DEVICE_CLASSES,
        },
        plugin=_structured,
    ),
}
