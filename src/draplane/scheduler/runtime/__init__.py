"""The framework runtime: plugin registry operations, profile resolution, the Framework."""

from draplane.scheduler.runtime.framework import Framework
from draplane.scheduler.runtime.registry import merge, register, unregister

__all__ = ["Framework", "merge", "register", "unregister"]
