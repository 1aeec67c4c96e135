"""scheduling.k8s.io/v1 PriorityClass (k8s.io/api/scheduling/v1), its field numbers (`tag`) those
of upstream's scheduling/v1/generated.proto."""

from __future__ import annotations

from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import f, struct

PRIORITY_CLASS = struct(
    "io.k8s.api.scheduling.v1.PriorityClass",
    "A mapping from a priority class name to the integer value of the priority.",
    *type_meta(),
    metadata_field(),
    f(
        "value",
        "int32",
        "The integer priority of pods of this class: the higher, the more important.",
        required=True,
        tag=2,
    ),
    f(
        "globalDefault",
        "boolean",
        "Whether this class is the priority of pods that name no priorityClassName; only one "
        "class may be the global default.",
        tag=3,
    ),
    f("description", "string", "When this priority class should be used.", tag=4),
    f(
        "preemptionPolicy",
        "string",
        "Never, or PreemptLowerPriority (the default): whether pods of this class preempt "
        "lower-priority pods.",
        tag=5,
        pointer=True,
    ),
)
serve("scheduling.k8s.io", "v1", "PriorityClass", PRIORITY_CLASS)
