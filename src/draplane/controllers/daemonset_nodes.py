"""Which nodes a DaemonSet runs on and the pod it puts there (spec/workloads.md 4.1, 4.2), as
pure functions over the set and a node (pkg/controller/daemon/util).

`should_run(node, ds)` gives (shouldRun, shouldContinueRunning) from the template's nodeName,
nodeSelector, required node affinity and the node's taints against the template's tolerations
plus the ones the controller adds; `new_pod(ds, node, hash)` is the pod for that node, pinned by
a `matchFields` term on `metadata.name` that the scheduler binds.
"""

from __future__ import annotations

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.nodeselector import NodeSelector
from draplane.api.tolerations import find_untolerated
from draplane.controllers import workload
from draplane.controllers.history import CONTROLLER_REVISION_HASH

POD_TEMPLATE_GENERATION = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
NODE_NAME_FIELD = "metadata.name"


def _toleration(key: str, effect: str) -> Obj:
    return {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": effect}


DEFAULT_TOLERATIONS: tuple[Obj, ...] = (
    _toleration("not-ready", NO_EXECUTE),
    _toleration("unreachable", NO_EXECUTE),
    _toleration("disk-pressure", NO_SCHEDULE),
    _toleration("memory-pressure", NO_SCHEDULE),
    _toleration("pid-pressure", NO_SCHEDULE),
    _toleration("unschedulable", NO_SCHEDULE),
)
HOST_NETWORK_TOLERATION = _toleration("network-unavailable", NO_SCHEDULE)


def _same_toleration(a: Obj, b: Obj) -> bool:
    """v1 Toleration.MatchToleration: key, operator, value and effect (not the seconds)."""
    return all(
        (a.get(k) or "") == (b.get(k) or "") for k in ("key", "operator", "value", "effect")
    ) and (a.get("operator") or "Equal") == (b.get("operator") or "Equal")


def with_daemon_tolerations(spec: Obj) -> list[Obj]:
    """AddOrUpdateDaemonPodTolerations: the pod spec's tolerations with the defaults added (a
    toleration matching one of them is replaced by it)."""
    tolerations = [dict(t) for t in spec.get("tolerations") or []]
    wanted = list(DEFAULT_TOLERATIONS)
    if spec.get("hostNetwork"):
        wanted.append(HOST_NETWORK_TOLERATION)
    for toleration in wanted:
        for i, existing in enumerate(tolerations):
            if _same_toleration(existing, toleration):
                tolerations[i] = dict(toleration)
                break
        else:
            tolerations.append(dict(toleration))
    return tolerations


def template_spec(ds: Obj) -> Obj:
    spec: Obj = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    return spec


def _fits_affinity(spec: Obj, node: Obj) -> bool:
    labels = meta.labels(node)
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not required:
        return True
    try:
        return NodeSelector.parse(required).matches(node)
    except ValueError:
        return False


def should_run(node: Obj, ds: Obj) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning)."""
    spec = template_spec(ds)
    node_name = spec.get("nodeName") or ""
    if node_name and node_name != meta.name(node):
        return False, False
    if not _fits_affinity(spec, node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tolerations = with_daemon_tolerations(spec)
    if find_untolerated(taints, tolerations, (NO_SCHEDULE, NO_EXECUTE)) is None:
        return True, True
    return False, find_untolerated(taints, tolerations, (NO_EXECUTE,)) is None


def node_affinity_for(affinity: Obj | None, node_name: str) -> Obj:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes one term
    `metadata.name In [node]` (existing required terms are replaced, spec 4.2 [QUIRK])."""
    out = meta.deep_copy(affinity or {})
    node_affinity = out.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": NODE_NAME_FIELD, "operator": "In", "values": [node_name]}]}
        ]
    }
    return out


def target_node(pod: Obj) -> str:
    """GetTargetNodeName: `spec.nodeName`, or while unscheduled the matchFields value."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            values = field.get("values") or []
            if field.get("key") == NODE_NAME_FIELD and field.get("operator") == "In" and values:
                return str(values[0])
    return ""


def template_generation(ds: Obj) -> str:
    """The template generation pods are labelled with: the deprecated annotation the registry
    keeps, else the set's generation."""
    value = meta.annotations(ds).get(TEMPLATE_GENERATION_ANNOTATION)
    if value:
        return value
    return str(meta.metadata(ds).get("generation") or "")


def is_updated(pod: Obj, ds: Obj, hash_: str) -> bool:
    """IsPodUpdated: the pod's hash label is the current hash, or (legacy) its template
    generation label is the set's."""
    labels = meta.labels(pod)
    generation = template_generation(ds)
    return (bool(hash_) and labels.get(CONTROLLER_REVISION_HASH) == hash_) or (
        bool(generation) and labels.get(POD_TEMPLATE_GENERATION) == generation
    )


def new_pod(ds: Obj, template: Obj, node_name: str, hash_: str) -> Obj:
    """The daemon pod for `node_name`: generateName `<ds>-`, tolerations, node affinity, and
    the `controller-revision-hash` and `pod-template-generation` labels."""
    pod = workload.pod_from_template(template, ds)
    pod["metadata"]["generateName"] = f"{meta.name(ds)}-"
    labels = pod["metadata"].setdefault("labels", {})
    labels[CONTROLLER_REVISION_HASH] = hash_
    generation = template_generation(ds)
    if generation:
        labels[POD_TEMPLATE_GENERATION] = generation
    spec = pod["spec"]
    spec["tolerations"] = with_daemon_tolerations(spec)
    spec["affinity"] = node_affinity_for(spec.get("affinity"), node_name)
    return pod
