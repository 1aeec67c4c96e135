"""events.k8s.io/v1 <-> core/v1 Event conversion (pkg/apis/events/v1/conversion.go): each field
under its name in the other version, lists converted item by item, other objects untouched, and
both directions lossless."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import conversion, eventconversion, kinds
from draplane.api.meta import Obj

REFERENCE = {"kind": "Pod", "namespace": "default", "name": "web"}
CORE: Obj = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "default"},
    "involvedObject": REFERENCE,
    "reason": "Scheduled",
    "message": "assigned",
    "source": {"component": "kubelet", "host": "node-0"},
    "firstTimestamp": "2026-12-08T00:00:00Z",
    "lastTimestamp": "2026-12-08T00:01:00Z",
    "count": 2,
    "type": "Normal",
    "eventTime": "2026-12-08T00:00:00.000000Z",
    "series": {"count": 2, "lastObservedTime": "2026-12-08T00:01:00.000000Z"},
    "action": "Binding",
    "related": {"kind": "Node", "name": "node-0"},
    "reportingComponent": "default-scheduler",
    "reportingInstance": "sched-0",
}
V1: Obj = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "default"},
    "regarding": REFERENCE,
    "reason": "Scheduled",
    "note": "assigned",
    "deprecatedSource": {"component": "kubelet", "host": "node-0"},
    "deprecatedFirstTimestamp": "2026-12-08T00:00:00Z",
    "deprecatedLastTimestamp": "2026-12-08T00:01:00Z",
    "deprecatedCount": 2,
    "type": "Normal",
    "eventTime": "2026-12-08T00:00:00.000000Z",
    "series": {"count": 2, "lastObservedTime": "2026-12-08T00:01:00.000000Z"},
    "action": "Binding",
    "related": {"kind": "Node", "name": "node-0"},
    "reportingController": "default-scheduler",
    "reportingInstance": "sched-0",
}


@pytest.mark.parametrize(
    ("obj", "rt", "want"),
    [
        pytest.param(CORE, kinds.EVENTS_V1, V1, id="core-to-v1"),
        pytest.param(V1, kinds.EVENTS, CORE, id="v1-to-core"),
        pytest.param(V1, kinds.EVENTS_V1, V1, id="same-version"),
        pytest.param(
            {**CORE, "reportingComponent": "", "reportingInstance": ""},
            kinds.EVENTS_V1,
            {k: v for k, v in V1.items() if k not in ("reportingController", "reportingInstance")},
            id="empty-reporting-omitted",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "EventList", "metadata": {}, "items": [CORE]},
            kinds.EVENTS_V1,
            {"apiVersion": "events.k8s.io/v1", "kind": "EventList", "metadata": {}, "items": [V1]},
            id="list",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Status", "status": "Failure"},
            kinds.EVENTS_V1,
            {"apiVersion": "v1", "kind": "Status", "status": "Failure"},
            id="status-untouched",
        ),
    ],
)
def test_convert(obj: Obj, rt: kinds.ResourceType, want: Any) -> None:
    assert conversion.convert(obj, rt) == want


def test_round_trips_are_lossless() -> None:
    assert eventconversion.to_core(eventconversion.to_v1(CORE)) == CORE
    assert eventconversion.to_v1(eventconversion.to_core(V1)) == V1


def test_storage_type() -> None:
    assert conversion.converts(kinds.EVENTS_V1) and not conversion.converts(kinds.EVENTS)
    assert conversion.storage_type(kinds.EVENTS_V1) is kinds.EVENTS
    assert kinds.EVENTS_V1.key == kinds.EVENTS.key == "events"
    assert kinds.EVENTS_V1 not in kinds.STORED
