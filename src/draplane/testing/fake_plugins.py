"""Reusable fake scheduler plugins, registered through factories like real plugins (tests only).

`FakeFilterPlugin(failed_nodes={name: Code})` rejects nodes and counts calls,
`FakeReservePlugin(status)` returns a fixed Reserve status and records Unreserve calls,
`FakePreEnqueuePlugin(blocked)` gates pods by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from draplane.api.meta import Obj
from draplane.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PluginArgs,
    PluginFactory,
    PodInfo,
    Status,
)


@dataclass
class FakeFilterPlugin:
    failed_nodes: dict[str, Code] = field(default_factory=dict)
    name: str = "FakeFilter"
    calls: int = 0

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status:
        self.calls += 1
        code = self.failed_nodes.get(node_info.name)
        if code is None:
            return SUCCESS
        return Status(code, (f"injected filter status for {node_info.name}",))


@dataclass
class FakeReservePlugin:
    status: Status = SUCCESS
    name: str = "FakeReserve"
    unreserved: list[str] = field(default_factory=list)

    async def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        return self.status

    async def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        self.unreserved.append(pod_info.key)


@dataclass
class FakePreEnqueuePlugin:
    blocked: set[str] = field(default_factory=set)
    name: str = "FakePreEnqueue"

    def pre_enqueue(self, pod: Obj) -> Status:
        if pod["metadata"]["name"] in self.blocked:
            return Status.unresolvable("blocked by test")
        return SUCCESS


def factory_for(plugin: object) -> PluginFactory:
    """A factory returning the given instance, so a test keeps a handle on it."""

    def new(args: PluginArgs, handle: Handle) -> object:
        return plugin

    return new  # type: ignore[return-value]


def registry_of(plugins: Iterable[object]) -> dict[str, PluginFactory]:
    return {p.name: factory_for(p) for p in plugins}  # type: ignore[attr-defined]
