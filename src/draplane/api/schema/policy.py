"""policy/v1 PodDisruptionBudget (k8s.io/api/policy/v1), with the protobuf field numbers of
its generated.proto."""

from __future__ import annotations

from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct
from draplane.api.schema.services import CONDITION

POLICY = "io.k8s.api.policy.v1."

POD_DISRUPTION_BUDGET_SPEC = struct(
    POLICY + "PodDisruptionBudgetSpec",
    "How many of the selected pods an eviction may leave unavailable.",
    f("minAvailable", "intorstring", "Pods (n or n%) that must stay available.", tag=1),
    f(
        "selector",
        LABEL_SELECTOR,
        "The pods of the budget; an empty selector selects every pod of the namespace.",
        patch_strategy="replace",
        tag=2,
    ),
    f("maxUnavailable", "intorstring", "Pods (n or n%) that may be unavailable.", tag=3),
    f(
        "unhealthyPodEvictionPolicy",
        "string",
        "IfHealthyBudget or AlwaysAllow: when running pods that are not healthy may be evicted.",
        enum=("AlwaysAllow", "IfHealthyBudget"),
        tag=4,
        pointer=True,
    ),
)
POD_DISRUPTION_BUDGET_STATUS = struct(
    POLICY + "PodDisruptionBudgetStatus",
    "The observed state of a budget.",
    f("observedGeneration", "int64", "The generation the disruption controller observed.", tag=1),
    f(
        "disruptedPods",
        Map("time"),
        "Pods being evicted, by name, with the time of their eviction.",
        tag=2,
    ),
    f("disruptionsAllowed", "int32", "Disruptions allowed now.", required=True, tag=3),
    f("currentHealthy", "int32", "Healthy pods now.", required=True, tag=4),
    f("desiredHealthy", "int32", "Healthy pods the budget asks for.", required=True, tag=5),
    f("expectedPods", "int32", "Pods the budget counts.", required=True, tag=6),
    f(
        "conditions",
        Arr(CONDITION),
        "Current observations of its state (DisruptionAllowed).",
        merge="type",
        list_type="map",
        tag=7,
    ),
)
POD_DISRUPTION_BUDGET = struct(
    POLICY + "PodDisruptionBudget",
    "The most disruption (evictions) a set of pods tolerates.",
    *type_meta(),
    metadata_field(),
    f("spec", POD_DISRUPTION_BUDGET_SPEC, "Desired state.", emit=True, tag=2),
    f("status", POD_DISRUPTION_BUDGET_STATUS, "Observed state.", emit=True, tag=3),
)

serve("policy", "v1", "PodDisruptionBudget", POD_DISRUPTION_BUDGET)
