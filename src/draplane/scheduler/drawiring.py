"""How the scheduler wires DynamicResources in each mode (`versions.Dra`), picked once when the
scheduler is built: the DRA kinds it lists and watches, the informers its event handlers take,
and the plugin's factory (classic DRA's `DynamicResources`, 1.28, or
`StructuredDynamicResources` with its `DynamicResourcesArgs`, 1.36)."""

from __future__ import annotations

from dataclasses import dataclass

from draplane.api import versions
from draplane.api.kinds import (
    DEVICE_CLASSES,
    POD_SCHEDULING_CONTEXTS,
    RESOURCE_CLAIMS,
    RESOURCE_CLAIMS_V1,
    RESOURCE_CLASSES,
    RESOURCE_SLICES,
    ResourceType,
)
from draplane.scheduler.framework.interfaces import PluginFactory
from draplane.scheduler.plugins.dynamicresources import new_classic, new_structured


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


_BY_DRA = {
    versions.Dra.CLASSIC: DraWiring(
        kinds=(RESOURCE_CLAIMS, RESOURCE_CLASSES, POD_SCHEDULING_CONTEXTS),
        handlers={"claims": RESOURCE_CLAIMS, "contexts": POD_SCHEDULING_CONTEXTS},
        plugin=new_classic,
    ),
    versions.Dra.STRUCTURED: DraWiring(
        kinds=(RESOURCE_CLAIMS_V1, DEVICE_CLASSES, RESOURCE_SLICES),
        handlers={
            "claims": RESOURCE_CLAIMS_V1,
            "slices": RESOURCE_SLICES,
            "classes": DEVICE_CLASSES,
        },
        plugin=new_structured,
    ),
}
