"""core/v1 scheduling constraints: NodeSelector and its terms, node and pod affinity
(Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.meta import LABEL_SELECTOR
from draplane.api.schema.model import Arr, f, struct

CORE = "io.k8s.api.core.v1."

NODE_SELECTOR_REQUIREMENT = struct(
    CORE + "NodeSelectorRequirement",
    "A key, an operator and values, matched against node labels or fields.",
    f("key", "string", "The label or field key.", required=True, tag=1),
    f(
        "operator",
        "string",
        "How the key relates to the values.",
        required=True,
        enum=("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"),
        tag=2,
    ),
    f("values", Arr("string"), "Values; one integer for Gt and Lt, none for Exists.", tag=3),
)
NODE_SELECTOR_TERM = struct(
    CORE + "NodeSelectorTerm",
    "Requirements that must all hold; an empty term matches no node.",
    f("matchExpressions", Arr(NODE_SELECTOR_REQUIREMENT), "Requirements on node labels.", tag=1),
    f("matchFields", Arr(NODE_SELECTOR_REQUIREMENT), "Requirements on node fields.", tag=2),
)
NODE_SELECTOR = struct(
    CORE + "NodeSelector",
    "Selects nodes: a node matches when any of the terms matches.",
    f("nodeSelectorTerms", Arr(NODE_SELECTOR_TERM), "The terms, ORed.", required=True, tag=1),
)
PREFERRED_SCHEDULING_TERM = struct(
    CORE + "PreferredSchedulingTerm",
    "A weighted node selector term used for scoring.",
    f("weight", "int32", "Weight in 1-100.", required=True, tag=1),
    f("preference", NODE_SELECTOR_TERM, "The term.", required=True, tag=2),
)
NODE_AFFINITY = struct(
    CORE + "NodeAffinity",
    "Constraints on the nodes a pod may run on.",
    f(
        "requiredDuringSchedulingIgnoredDuringExecution",
        NODE_SELECTOR,
        "Nodes the pod must be scheduled on.",
        tag=1,
    ),
    f(
        "preferredDuringSchedulingIgnoredDuringExecution",
        Arr(PREFERRED_SCHEDULING_TERM),
        "Nodes the scheduler prefers.",
        tag=2,
    ),
)
POD_AFFINITY_TERM = struct(
    CORE + "PodAffinityTerm",
    "Pods matching the selector in these namespaces, within one topology domain.",
    f("labelSelector", LABEL_SELECTOR, "The pods to consider.", tag=1),
    f("namespaces", Arr("string"), "Namespaces of those pods; the pod's own when empty.", tag=2),
    f("topologyKey", "string", "Node label whose value defines the domain.", required=True, tag=3),
    f("namespaceSelector", LABEL_SELECTOR, "Namespaces of those pods, by label.", tag=4),
)
WEIGHTED_POD_AFFINITY_TERM = struct(
    CORE + "WeightedPodAffinityTerm",
    "A weighted pod affinity term used for scoring.",
    f("weight", "int32", "Weight in 1-100.", required=True, tag=1),
    f("podAffinityTerm", POD_AFFINITY_TERM, "The term.", required=True, tag=2),
)


def _pod_affinity(name: str, what: str) -> str:
    return struct(
        CORE + name,
        f"Pods this pod should be placed {what}.",
        f(
            "requiredDuringSchedulingIgnoredDuringExecution",
            Arr(POD_AFFINITY_TERM),
            "Terms that must hold.",
            tag=1,
        ),
        f(
            "preferredDuringSchedulingIgnoredDuringExecution",
            Arr(WEIGHTED_POD_AFFINITY_TERM),
            "Terms the scheduler prefers.",
            tag=2,
        ),
    )


AFFINITY = struct(
    CORE + "Affinity",
    "Scheduling constraints: node affinity, pod affinity and anti-affinity.",
    f("nodeAffinity", NODE_AFFINITY, "Node affinity.", tag=1),
    f("podAffinity", _pod_affinity("PodAffinity", "with"), "Pod affinity.", tag=2),
    f(
        "podAntiAffinity",
        _pod_affinity("PodAntiAffinity", "away from"),
        "Pod anti-affinity.",
        tag=3,
    ),
)
