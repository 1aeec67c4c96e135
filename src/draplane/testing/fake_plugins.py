"""Reusable fake scheduler plugins, registered through factories like real plugins (tests only).

`FakeFilterPlugin(failed_nodes={name: Code})` rejects nodes and counts calls,
`FakeReservePlugin(status)` returns a fixed Reserve status (after an optional `before_reserve`
hook) and records Unreserve calls, `FakePermitPlugin(status, timeout)` and
`FakeBindPlugin(status)`, `FakePreFilterPlugin(status)` and `FakePostFilterPlugin(status)`
return fixed statuses and count calls, `FakePreEnqueuePlugin(blocked)` gates pods by name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
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
class FakePreFilterPlugin:
    status: Status = SUCCESS
    name: str = "FakePreFilter"
    calls: int = 0

    def pre_filter(self, state: CycleState, pod_info: PodInfo) -> Status:
        self.calls += 1
        return self.status


@dataclass
class FakePostFilterPlugin:
    status: Status = SUCCESS
    name: str = "FakePostFilter"
    calls: int = 0

    async def post_filter(
        self, state: CycleState, pod_info: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> Status:
        self.calls += 1
        return self.status


@dataclass
class FakeReservePlugin:
    status: Status = SUCCESS
    name: str = "FakeReserve"
    unreserved: list[str] = field(default_factory=list)
    before_reserve: Callable[[PodInfo], Awaitable[None]] | None = None
    """Runs inside Reserve: a concurrent change the test injects mid-cycle."""

    async def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        if self.before_reserve is not None:
            await self.before_reserve(pod_info)
        return self.status

    async def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        self.unreserved.append(pod_info.key)


@dataclass
class FakePermitPlugin:
    status: Status = SUCCESS
    timeout: float = 0.0
    name: str = "FakePermit"

    async def permit(
        self, state: CycleState, pod_info: PodInfo, node_name: str
    ) -> tuple[Status, float]:
        return self.status, self.timeout


@dataclass
class FakeBindPlugin:
    status: Status = SUCCESS
    name: str = "FakeBind"
    bound: list[str] = field(default_factory=list)

    async def bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status:
        self.bound.append(pod_info.key)
        return self.status


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
