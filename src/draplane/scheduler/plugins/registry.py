"""`new_in_tree_registry()`: every in-tree plugin by name. Built on demand, never global."""

from __future__ import annotations

from draplane.scheduler.framework import Registry
from draplane.scheduler.plugins import (
    defaultbinder,
    dynamicresources,
    names,
    nodeaffinity,
    nodename,
    noderesources,
    nodeunschedulable,
    queuesort,
    tainttoleration,
)


def new_in_tree_registry() -> Registry:
    return {
        names.PRIORITY_SORT: queuesort.new,
        names.NODE_UNSCHEDULABLE: nodeunschedulable.new,
        names.NODE_NAME: nodename.new,
        names.TAINT_TOLERATION: tainttoleration.new,
        names.NODE_AFFINITY: nodeaffinity.new,
        names.NODE_RESOURCES_FIT: noderesources.new,
        names.DYNAMIC_RESOURCES: dynamicresources.new,
        names.DEFAULT_BINDER: defaultbinder.new,
    }
