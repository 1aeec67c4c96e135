"""The node side of a DRA driver: the `NodePlugin` protocol and the `NodePluginRegistry` seam.

Simulated nodes find a driver's kubelet plugin by driver name in this registry (in-process, the
way a DaemonSet places one plugin instance on every node). It lives in `dra` because both the
driver framework and the nodes use it, and those two packages never import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from draplane.api.meta import Obj
from draplane.client.interface import Client


class NodePlugin(Protocol):
    """One driver's kubelet plugin on one node (NodePrepareResources / NodeUnprepareResources)."""

    async def prepare(self, claim: Obj) -> list[str]:
        """Make the allocated claim usable on this node; return its CDI device names.

        Called for every pod using the claim, also again after a node restart: it must be
        idempotent per claim UID. Raise an exception when the claim cannot be prepared here.
        """
        ...

    async def unprepare(self, claim: Obj) -> None:
        """Release what `prepare` set up. Idempotent: unknown claims are a no-op."""
        ...


NodePluginFactory = Callable[[str], NodePlugin]
"""Builds the plugin instance of one node, given the node name."""


class NodePluginRegistry:
    """Driver name -> factory of per-node plugin instances.

    Each (driver, node) instance is built once and kept, so a simulated node that restarts over
    the same registry meets the same plugin again, as a kubelet restart meets the running
    DaemonSet pod.
    """

    def __init__(self) -> None:
        self._factories: dict[str, NodePluginFactory] = {}
        self._instances: dict[tuple[str, str], NodePlugin] = {}

    def register(self, driver_name: str, factory: NodePluginFactory) -> None:
        if driver_name in self._factories:
            raise ValueError(f"a node plugin for driver {driver_name!r} is already registered")
        self._factories[driver_name] = factory

    @property
    def driver_names(self) -> list[str]:
        return sorted(self._factories)

    def plugin(self, driver_name: str, node_name: str) -> NodePlugin | None:
        """The plugin of `driver_name` on `node_name`, or None when no such driver runs."""
        factory = self._factories.get(driver_name)
        if factory is None:
            return None
        instance = self._instances.get((driver_name, node_name))
        if instance is None:
            instance = factory(node_name)
            self._instances[(driver_name, node_name)] = instance
        return instance


@runtime_checkable
class SlicePublishingPlugin(Protocol):
    """A kubelet plugin that publishes its node's ResourceSlices (structured parameters), as
    upstream's kubeletplugin helper starts the resourceslice controller on registration."""

    async def start(self, client: Client, node: Obj) -> None:
        """Publish the node's slices, writing as the node (`client` is the node's)."""
        ...

    async def stop(self) -> None:
        """Delete the node's slices (the plugin is removed from the node)."""
        ...
