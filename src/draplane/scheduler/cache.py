"""The scheduler cache: nodes with the pods counted against them, including assumed pods.

A pod is assumed on its node from Reserve until the informer reports it bound, so a pod in
its binding cycle already uses the node's capacity. A pod held for a node (waiting for a driver
to allocate its claims there) counts the same way until its next attempt. Pods seen on a node
that the cache does not know yet are kept on a placeholder until the node arrives. Not
thread-safe: one event loop.
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.scheduler.framework.types import NodeInfo, PodInfo

log = logging.getLogger(__name__)


class SchedulerCache:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._known_nodes: set[str] = set()
        self._pod_nodes: dict[str, str] = {}
        """Pod uid -> node name, for every pod counted (bound or assumed)."""
        self._assumed: set[str] = set()
        self._held: set[str] = set()
        """Pods waiting for their claims to be allocated on the node they are counted on."""
        self._node_list: list[NodeInfo] | None = None

    # -- nodes ---------------------------------------------------------------------------------

    def add_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self._nodes.get(name)
        if info is None:
            self._nodes[name] = NodeInfo(node)
        else:
            info.set_node(node)
        if name not in self._known_nodes:
            # An update changes the NodeInfo in place: the ordered list stays valid.
            self._known_nodes.add(name)
            self._node_list = None

    def update_node(self, node: Obj) -> None:
        self.add_node(node)

    def remove_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        self._known_nodes.discard(name)
        info = self._nodes.get(name)
        if info is not None and not info.pods:
            del self._nodes[name]
        self._node_list = None

    def node_infos(self) -> list[NodeInfo]:
        """The nodes the scheduler may use, in a stable order (shared list: do not change)."""
        if self._node_list is None:
            self._node_list = [self._nodes[n] for n in sorted(self._known_nodes)]
        return self._node_list

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name) if name in self._known_nodes else None

    # -- pods ----------------------------------------------------------------------------------

    def add_pod(self, pod: Obj) -> None:
        """A bound pod from the informer; confirms an assumed pod."""
        info = PodInfo(pod)
        node_name = meta.node_name(pod)
        self._assumed.discard(info.uid)
        self._held.discard(info.uid)
        self._place(info, node_name)

    def update_pod(self, pod: Obj) -> None:
        self.add_pod(pod)

    def remove_pod(self, pod: Obj) -> None:
        uid = meta.uid(pod)
        self._assumed.discard(uid)
        self._held.discard(uid)
        self._unplace(uid)

    def assume_pod(self, pod_info: PodInfo, node_name: str) -> None:
        self._assumed.add(pod_info.uid)
        self._place(pod_info, node_name)

    def forget_pod(self, pod_info: PodInfo) -> None:
        """Undo `assume_pod` after a failed attempt (a no-op once the pod is confirmed); a
        pod held in the same attempt stays counted on its node."""
        if pod_info.uid in self._assumed:
            self._assumed.discard(pod_info.uid)
            if pod_info.uid not in self._held:
                self._unplace(pod_info.uid)

    def is_assumed(self, uid: str) -> bool:
        return uid in self._assumed

    def hold(self, pod_info: PodInfo, node_name: str) -> None:
        """Count an unbound pod on `node_name` until `release` (its next attempt), because a
        driver was asked to allocate its claims for that node: pods scheduled meanwhile then
        see the node as fuller and spread out, instead of all choosing the same one."""
        self._held.add(pod_info.uid)
        self._place(pod_info, node_name)

    def release(self, uid: str) -> None:
        """End a hold (the pod is attempted again, or deleted); a no-op without one."""
        if uid in self._held:
            self._held.discard(uid)
            if uid not in self._assumed:
                self._unplace(uid)

    def is_held(self, uid: str) -> bool:
        return uid in self._held

    def _place(self, info: PodInfo, node_name: str) -> None:
        previous = self._pod_nodes.get(info.uid)
        if previous is not None and previous != node_name:
            self._unplace(info.uid)
        node = self._nodes.get(node_name)
        if node is None:
            node = self._nodes[node_name] = NodeInfo({"metadata": {"name": node_name}})
        node.add_pod(info)
        self._pod_nodes[info.uid] = node_name

    def _unplace(self, uid: str) -> None:
        node_name = self._pod_nodes.pop(uid, None)
        if node_name is None:
            return
        node = self._nodes.get(node_name)
        if node is None:
            return
        node.remove_pod(uid)
        if not node.pods and node_name not in self._known_nodes:
            del self._nodes[node_name]
