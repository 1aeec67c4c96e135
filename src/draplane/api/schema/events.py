"""events.k8s.io/v1 Event (k8s.io/api events/v1 types.go; field numbers from its
generated.proto). Stored as a core/v1 Event (`draplane.api.eventconversion`)."""

from __future__ import annotations

from draplane.api.schema.core import EVENT_SOURCE, OBJECT_REFERENCE
from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import f, struct

EVENTS = "io.k8s.api.events.v1."

EVENT_SERIES = struct(
    EVENTS + "EventSeries",
    "A series of occurrences of an event, updated on heartbeats by its reporter.",
    f("count", "int32", "Occurrences up to the last heartbeat.", required=True, tag=1),
    f(
        "lastObservedTime",
        "microtime",
        "When the last occurrence before the last heartbeat was seen.",
        required=True,
        tag=2,
    ),
)
EVENT = struct(
    EVENTS + "Event",
    "A report of an event somewhere in the cluster, generally a state change.",
    *type_meta(),
    metadata_field(),
    f("eventTime", "microtime", "When the event was first observed.", required=True, tag=2),
    f("series", EVENT_SERIES, "The series this event represents; nil for a singleton.", tag=3),
    f("reportingController", "string", "The controller that emitted the event.", tag=4),
    f("reportingInstance", "string", "The instance of that controller.", tag=5),
    f("action", "string", "What was done or failed regarding the regarding object.", tag=6),
    f("reason", "string", "Why the action was taken.", tag=7),
    f("regarding", OBJECT_REFERENCE, "The object the event is about.", emit=True, tag=8),
    f("related", OBJECT_REFERENCE, "A secondary object of a more complex action.", tag=9),
    f("note", "string", "Human-readable description (at most 1kB).", tag=10),
    f("type", "string", "Normal or Warning.", tag=11),
    f("deprecatedSource", EVENT_SOURCE, "core/v1's source.", emit=True, tag=12),
    f("deprecatedFirstTimestamp", "time", "core/v1's firstTimestamp.", emit=True, tag=13),
    f("deprecatedLastTimestamp", "time", "core/v1's lastTimestamp.", emit=True, tag=14),
    f("deprecatedCount", "int32", "core/v1's count.", tag=15),
)
serve("events.k8s.io", "v1", "Event", EVENT)
