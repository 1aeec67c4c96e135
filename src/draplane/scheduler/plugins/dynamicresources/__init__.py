"""The DynamicResources scheduler plugin (classic DRA, Kubernetes 1.28), split by concern."""

from draplane.scheduler.plugins.dynamicresources.plugin import DynamicResources, new

__all__ = ["DynamicResources", "new"]
