"""The DynamicResources scheduler plugin: classic DRA (Kubernetes 1.28, `plugin.py`) and
structured parameters (resource.k8s.io/v1, `structured.py`), split by concern."""

from draplane.scheduler.plugins.dynamicresources.plugin import (
    DynamicResources,
    new,
    new_classic,
    new_structured,
)
from draplane.scheduler.plugins.dynamicresources.structured import StructuredDynamicResources

__all__ = [
    "DynamicResources",
    "StructuredDynamicResources",
    "new",
    "new_classic",
    "new_structured",
]
