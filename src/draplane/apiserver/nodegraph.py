"""The node authorizer's graph (as kubernetes/kubernetes plugin/pkg/auth/authorizer/node/graph.go):
which objects each node may read, from the pods bound to it.

Only pods with `spec.nodeName` contribute (pod -> node). Each such pod adds edges from the objects
it references to its node: its ResourceClaims (every pod claim that `dra.name()` resolves to a
name, so a generated claim only once the claim controller has recorded it in the pod's status,
and the claim of its DRA-backed extended resources in `status.extendedResourceClaimStatus`),
its Secrets and ConfigMaps (`podrefs`), its PersistentVolumeClaims (volumes and generic
ephemeral volumes) and its ServiceAccount (graph_populator.go). A mirror pod adds only the pod ->
node edge, whatever it references. A PersistentVolume bound to a claim adds pv -> pvc and, for
the secrets its source names, secret -> pv. ResourceSlices with `spec.nodeName` add a
slice -> node edge (the 1.36 mode). The watch cache feeds it each event before any watcher sees
it, so a node that has seen its pod can read what it references.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from draplane import dra
from draplane.api import kinds, podrefs
from draplane.api.meta import Obj
from draplane.dra import extended
from draplane.storage.interface import Event

PodKey = tuple[str, str]
Ref = tuple[str, str, str]
"""(resource, namespace, name) of an object a pod references."""

CLAIM = kinds.RESOURCE_CLAIMS.resource
CONFIGMAP = kinds.CONFIGMAPS.resource
SECRET = kinds.SECRETS.resource
SERVICEACCOUNT = kinds.SERVICE_ACCOUNTS.resource
PVC = "persistentvolumeclaims"
PV = "persistentvolumes"
"""Core resources: their resource name is also their storage key."""


class NodeGraph:
    def __init__(self) -> None:
        self._pods: dict[PodKey, tuple[str, tuple[Ref, ...]]] = {}
        self._edges: dict[Ref, Counter[str]] = {}
        self._slices: dict[str, str] = {}
        self._pvs: dict[str, tuple[PodKey, tuple[PodKey, ...]]] = {}
        """PersistentVolume name -> (its claimRef's namespace/name, its secrets)."""
        self._pv_secrets: dict[PodKey, set[str]] = {}
        """secret namespace/name -> the PersistentVolumes naming it."""

    def load(
        self, pods: Iterable[Obj], slices: Iterable[Obj] = (), pvs: Iterable[Obj] = ()
    ) -> None:
        for pod in pods:
            self._set(pod)
        for slice_ in slices:
            self._set_slice(slice_, deleted=False)
        for pv in pvs:
            self._set_pv(pv, deleted=False)

    def observe(self, event: Event) -> None:
        if event.resource == kinds.RESOURCE_SLICES.key:
            self._set_slice(event.object, deleted=event.type == "DELETED")
        elif event.resource == PV:
            self._set_pv(event.object, deleted=event.type == "DELETED")
        elif event.resource == kinds.PODS.key:
            if event.type == "DELETED":
                self._remove(_key(event.object))
            else:
                self._set(event.object)

    def allows(self, node: str, namespace: str, claim: str) -> bool:
        """The node may read the ResourceClaim `namespace/claim`."""
        return self.has_path(node, CLAIM, namespace, claim)

    def has_path(self, node: str, resource: str, namespace: str, name: str) -> bool:
        """A path from the object to `node`: a pod on the node references it, or (a PV) it is
        bound to such a pod's claim, or (a secret) such a PV names it."""
        if self._edges.get((resource, namespace, name), Counter())[node] > 0:
            return True
        if resource == PV:
            entry = self._pvs.get(name)
            return entry is not None and self.has_path(node, PVC, *entry[0])
        if resource == SECRET:
            return any(
                self.has_path(node, PV, "", pv)
                for pv in self._pv_secrets.get((namespace, name), ())
            )
        return False

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

    def _set_pv(self, pv: Obj, *, deleted: bool) -> None:
        name = _key(pv)[1]
        old = self._pvs.pop(name, None)
        if old is not None:
            for secret in old[1]:
                names = self._pv_secrets.get(secret, set())
                names.discard(name)
                if not names:
                    self._pv_secrets.pop(secret, None)
        spec = pv.get("spec")
        claim = spec.get("claimRef") if isinstance(spec, dict) else None
        if deleted or not isinstance(claim, dict):
            return
        claim_key = (str(claim.get("namespace") or ""), str(claim.get("name") or ""))
        secrets = tuple(sorted(set(podrefs.persistent_volume_secrets(pv))))
        self._pvs[name] = (claim_key, secrets)
        for secret in secrets:
            self._pv_secrets.setdefault(secret, set()).add(name)

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


def _key(obj: Obj) -> PodKey:
    md = obj.get("metadata") or {}
    return str(md.get("namespace") or ""), str(md.get("name") or "")


def _references(pod: Obj, namespace: str) -> Iterator[Ref]:
    if podrefs.is_mirror(pod):
        # A node must never create a pod that grants it access to other objects
        # (NodeRestriction refuses such mirror pods; this is the defence in depth).
        return
    for _, claim in dra.pod_claim_names(pod):
        if claim is not None:
            yield CLAIM, namespace, claim
    extended_claim = extended.claim_name(pod)  # status.extendedResourceClaimStatus
    if extended_claim is not None:
        yield CLAIM, namespace, extended_claim
    spec = pod.get("spec") or {}
    sa = spec.get("serviceAccountName")
    if isinstance(sa, str) and sa:
        yield SERVICEACCOUNT, namespace, sa
    for resource, names in (
        (SECRET, podrefs.secret_names(pod)),
        (CONFIGMAP, podrefs.configmap_names(pod)),
        (PVC, podrefs.persistent_volume_claim_names(pod)),
    ):
        for name in names:
            yield resource, namespace, name
