"""Running the scheduler's own PreFilter and Filter plugins on a `Snapshot`: the default
profile of `SchedulerConfig`, the in-tree registry with the structured DynamicResources plugin,
listers over the snapshot. Only PreFilter and Filter run, so nothing is written to the API.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from draplane.api import versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.explain.snapshot import Snapshot
from draplane.scheduler.config import Profile, SchedulerConfig
from draplane.scheduler.drawiring import dra_wiring
from draplane.scheduler.framework.cycle_state import CycleState
from draplane.scheduler.framework.handle import Handle
from draplane.scheduler.framework.status import Status
from draplane.scheduler.framework.types import NodeInfo, PodInfo
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.registry import new_in_tree_registry
from draplane.scheduler.runtime.framework import Framework


@dataclass
class Evaluation:
    """What the scheduler's filters say about one pod on every node of a snapshot."""

    pre_filter: Status
    """PreFilter's status; when rejected no Filter ran."""
    failures: dict[str, list[Status]] = field(default_factory=dict)
    """Node name -> every rejecting Filter's status (plugin set), in profile order."""
    feasible: list[str] = field(default_factory=list)

    @property
    def schedulable(self) -> bool:
        return self.pre_filter.is_success and bool(self.feasible)


def _framework(client: Client, snapshot: Snapshot, profile: Profile) -> Framework:
    handle = Handle(client, snapshot.listers())
    registry = new_in_tree_registry()
    registry[names.DYNAMIC_RESOURCES] = dra_wiring(versions.STRUCTURED).plugin
    return Framework(profile=profile, registry=registry, handle=handle)


def node_infos(snapshot: Snapshot) -> list[NodeInfo]:
    pods = snapshot.bound_pods()
    infos = []
    for node in snapshot.nodes:
        info = NodeInfo(node)
        for pod in pods.get(info.name, ()):
            info.add_pod(PodInfo(pod))
        infos.append(info)
    return infos


def evaluate(
    client: Client,
    snapshot: Snapshot,
    pod: Obj,
    *,
    profile: Profile | None = None,
    first_fit: bool = False,
    prefer: tuple[str, ...] = (),
) -> Evaluation:
    """PreFilter, then every Filter on every node (all rejecting filters, not only the first,
    so each node's reasons are complete). `first_fit` stops at the first feasible node,
    trying the `prefer` nodes first (checking a candidate fix)."""
    framework = _framework(client, snapshot, profile or SchedulerConfig().profile)
    state = CycleState()
    pod_info = PodInfo(pod)
    status = framework.run_pre_filter_plugins(state, pod_info)
    result = Evaluation(pre_filter=status)
    if not status.is_success:
        return result
    filters = framework.filters(state)
    infos = node_infos(snapshot)
    if prefer:
        order = {name: i for i, name in enumerate(prefer)}
        infos.sort(key=lambda n: order.get(n.name, len(order)))
    for info in infos:
        failed: list[Status] = []
        for name, fn in filters:
            try:
                verdict = fn(state, pod_info, info)
            except Exception as err:  # a plugin failing is an answer here, not a crash
                verdict = Status.error(str(err) or type(err).__name__)
            if verdict.code:
                failed.append(verdict.with_plugin(name))
                if first_fit:
                    break
        if failed:
            result.failures[info.name] = failed
        else:
            result.feasible.append(info.name)
            if first_fit:
                break
    return result
