"""Strategy of events.k8s.io/v1 Events (pkg/registry/core/event/strategy.go with the
request version's rules of pkg/apis/core/validation/events.go).

They are stored as core/v1 Events: a write is converted and stored through core/v1's
declaration (`strategies.core`), and this one's validation applies in place of core/v1's
(`Request.asked`). Its hooks read the stored core/v1 shape (validation, field selectors),
except the printer, which is handed the object as served.
"""

from __future__ import annotations

from draplane.api import fieldselector, kinds
from draplane.api.validation import events
from draplane.apiserver import printers
from draplane.apiserver.strategies import ResourceStrategy

STRATEGIES = (
    ResourceStrategy(
        kinds.EVENTS_V1,
        validate=events.validate_event_v1,
        validate_update=events.validate_event_v1_update,
        printer=printers.EVENT_V1,
        fields=fieldselector.EVENT_V1_FIELDS,
        has_dependents=False,
    ),
)
