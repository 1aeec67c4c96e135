"""Operations on a plugin `Registry` (a plain dict name -> factory): duplicates are errors."""

from __future__ import annotations

from draplane.scheduler.framework.interfaces import PluginFactory, Registry


def register(registry: Registry, *, name: str, factory: PluginFactory) -> None:
    if name in registry:
        raise ValueError(f"a plugin named {name} already exists")
    registry[name] = factory


def unregister(registry: Registry, name: str) -> None:
    if name not in registry:
        raise ValueError(f"no plugin named {name} exists")
    del registry[name]


def merge(registry: Registry, other: Registry) -> None:
    """Add every plugin of `other` (out-of-tree plugins) to `registry`."""
    for name, factory in other.items():
        register(registry, name=name, factory=factory)
