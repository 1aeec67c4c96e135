"""The node authorizer's graph for ResourceClaims: claim -> pod -> node edges (as
kubernetes/kubernetes plugin/pkg/auth/authorizer/node/graph.go).

Only pods with `spec.nodeName` contribute; every pod claim that `dra.name()` resolves to a name
adds the edge `<namespace>/<claim>` -> node (errors and "no claim needed" add none). The watch
cache feeds it each pod event before any watcher sees that event, so a node that has seen its
pod can read the pod's claims.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from draplane import dra
from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.storage.interface import Event

PodKey = tuple[str, str]
ClaimKey = tuple[str, str]


class NodeGraph:
    def __init__(self) -> None:
        self._pods: dict[PodKey, tuple[str, tuple[ClaimKey, ...]]] = {}
        self._edges: dict[ClaimKey, Counter[str]] = {}

    def load(self, pods: Iterable[Obj]) -> None:
        for pod in pods:
            self._set(pod)

    def observe(self, event: Event) -> None:
        if event.resource != kinds.PODS.key:
            return
        if event.type == "DELETED":
            self._remove(_key(event.object))
        else:
            self._set(event.object)

    def allows(self, node: str, namespace: str, claim: str) -> bool:
        return self._edges.get((namespace, claim), Counter())[node] > 0

    def _set(self, pod: Obj) -> None:
        key = _key(pod)
        self._remove(key)
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        claims = tuple((key[0], name) for _, name in dra.pod_claim_names(pod) if name is not None)
        self._pods[key] = (str(node), claims)
        for claim in claims:
            self._edges.setdefault(claim, Counter())[str(node)] += 1

    def _remove(self, key: PodKey) -> None:
        old = self._pods.pop(key, None)
        if old is None:
            return
        node, claims = old
        for claim in claims:
            counter = self._edges[claim]
            counter[node] -= 1
            if counter[node] <= 0:
                del counter[node]
            if not counter:
                del self._edges[claim]


def _key(pod: Obj) -> PodKey:
    md = pod.get("metadata") or {}
    return str(md.get("namespace") or ""), str(md.get("name") or "")
