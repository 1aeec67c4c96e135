"""The node authorizer's graph (as kubernetes/kubernetes plugin/pkg/auth/authorizer/node/graph.go):
which objects each node may read, from the pods bound to it.

Only pods with `spec.nodeName` contribute (pod -> node). Each such pod adds edges from the objects
it references to its node: its ResourceClaims (every pod claim that `dra.name()` resolves to a
name, so a generated claim only once the claim controller has recorded it in the pod's status,
and the claim of its DRA-backed extended resources in `status.extendedResourceClaimStatus`),
its ConfigMaps (volumes, projected volumes, `env` and `envFrom`) and its ServiceAccount
(plugin/pkg/auth/authorizer/node/graph_populator.go). ResourceSlices with `spec.nodeName` add
a slice -> node edge (the 1.36 mode). The watch cache feeds it each pod and slice event before
any watcher sees that event, so a node that has seen its pod can read what it references.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from draplane import dra
from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.dra import extended
from draplane.storage.interface import Event

PodKey = tuple[str, str]
Ref = tuple[str, str, str]
"""(resource, namespace, name) of an object a pod references."""

CLAIM = kinds.RESOURCE_CLAIMS.resource
CONFIGMAP = kinds.CONFIGMAPS.resource
SERVICEACCOUNT = kinds.SERVICE_ACCOUNTS.resource


class NodeGraph:
    def __init__(self) -> None:
        self._pods: dict[PodKey, tuple[str, tuple[Ref, ...]]] = {}
        self._edges: dict[Ref, Counter[str]] = {}
        self._slices: dict[str, str] = {}

    def load(self, pods: Iterable[Obj], slices: Iterable[Obj] = ()) -> None:
        for pod in pods:
            self._set(pod)
        for slice_ in slices:
            self._set_slice(slice_, deleted=False)

    def observe(self, event: Event) -> None:
        if event.resource == kinds.RESOURCE_SLICES.key:
            self._set_slice(event.object, deleted=event.type == "DELETED")
            return
        if event.resource != kinds.PODS.key:
            return
        if event.type == "DELETED":
            self._remove(_key(event.object))
        else:
            self._set(event.object)

    def allows(self, node: str, namespace: str, claim: str) -> bool:
        """The node may read the ResourceClaim `namespace/claim`."""
        return self.has_path(node, CLAIM, namespace, claim)

    def has_path(self, node: str, resource: str, namespace: str, name: str) -> bool:
        return self._edges.get((resource, namespace, name), Counter())[node] > 0

    def pod_node(self, namespace: str, name: str) -> str | None:
        """The node a known, bound pod runs on."""
        entry = self._pods.get((namespace, name))
        return entry[0] if entry is not None else None

    def slice_node(self, name: str) -> str | None:
        """The `spec.nodeName` of a known ResourceSlice (None: unknown or not node-local)."""
        return self._slices.get(name)

    def _set_slice(self, slice_: Obj, *, deleted: bool) -> None:
        name = _key(slice_)[1]
        spec = slice_.get("spec")
        node = spec.get("nodeName") if isinstance(spec, dict) else None
        if deleted or not node or not isinstance(node, str):
            self._slices.pop(name, None)
        else:
            self._slices[name] = node

    def _set(self, pod: Obj) -> None:
        key = _key(pod)
        self._remove(key)
        spec = pod.get("spec")
        node = spec.get("nodeName") if isinstance(spec, dict) else None
        if not node or not isinstance(node, str):
            return
        refs = tuple(sorted(set(_references(pod, key[0]))))
        self._pods[key] = (node, refs)
        for ref in refs:
            self._edges.setdefault(ref, Counter())[node] += 1

    def _remove(self, key: PodKey) -> None:
        old = self._pods.pop(key, None)
        if old is None:
            return
        node, refs = old
        for ref in refs:
            counter = self._edges[ref]
            counter[node] -= 1
            if counter[node] <= 0:
                del counter[node]
            if not counter:
                del self._edges[ref]


def _key(pod: Obj) -> PodKey:
    md = pod.get("metadata") or {}
    return str(md.get("namespace") or ""), str(md.get("name") or "")


def _references(pod: Obj, namespace: str) -> Iterator[Ref]:
    for _, claim in dra.pod_claim_names(pod):
        if claim is not None:
            yield CLAIM, namespace, claim
    extended_claim = extended.claim_name(pod)  # status.extendedResourceClaimStatus
    if extended_claim is not None:
        yield CLAIM, namespace, extended_claim
    spec = pod.get("spec") or {}
    sa = spec.get("serviceAccountName") or "default"
    if isinstance(sa, str):
        yield SERVICEACCOUNT, namespace, sa
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        yield from _configmap(volume.get("configMap"), namespace)
        projected = volume.get("projected")
        if isinstance(projected, dict):
            for source in projected.get("sources") or []:
                if isinstance(source, dict):
                    yield from _configmap(source.get("configMap"), namespace)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            for env_from in container.get("envFrom") or []:
                if isinstance(env_from, dict):
                    yield from _configmap(env_from.get("configMapRef"), namespace)
            for env in container.get("env") or []:
                source = env.get("valueFrom") if isinstance(env, dict) else None
                if isinstance(source, dict):
                    yield from _configmap(source.get("configMapKeyRef"), namespace)


def _configmap(ref: object, namespace: str) -> Iterator[Ref]:
    if isinstance(ref, dict) and isinstance(ref.get("name"), str) and ref["name"]:
        yield CONFIGMAP, namespace, ref["name"]
