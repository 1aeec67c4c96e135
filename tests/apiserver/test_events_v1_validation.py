"""events.k8s.io/v1 validation through the real HTTPS path, in both modes: a write at
events.k8s.io/v1 is held to ValidateEventCreate/Update's rules for that version (422 with the
internal type's paths), the same object written at core/v1 only to legacyValidateEvent."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from draplane.api import versions
from draplane.api.meta import Obj

from .events_v1 import (
    CORE,
    EV1,
    LATER,
    STRATEGIC,
    call,
    core_event,
    event_v1,
    path,
)


@pytest.fixture(params=[versions.CLASSIC, versions.STRUCTURED], ids=["1.28", "1.36"])
def server_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    return {"mode": request.param}


def _causes(body: Obj) -> list[tuple[str, str, str]]:
    return [(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]]


REQUIRED, INVALID = "FieldValueRequired", "FieldValueInvalid"


@pytest.mark.parametrize(
    ("event", "causes"),
    [
        pytest.param(
            event_v1(eventTime=None),
            [(REQUIRED, "eventTime", "Required value")],
            id="event-time-required",
        ),
        pytest.param(
            event_v1(reportingController=None, reportingInstance=None, action=None),
            [
                (REQUIRED, "reportingController", "Required value"),
                (
                    INVALID,
                    "reportingController",
                    'Invalid value: "": name part must be non-empty',
                ),
                (REQUIRED, "reportingInstance", "Required value"),
                (REQUIRED, "action", "Required value"),
            ],
            id="reporting-and-action-required",
        ),
        pytest.param(
            event_v1(reportingInstance="i" * 129, action="a" * 129, reason="r" * 129),
            [
                (
                    INVALID,
                    "reportingInstance",
                    'Invalid value: "": can have at most 128 characters',
                ),
                (INVALID, "action", 'Invalid value: "": can have at most 128 characters'),
                (INVALID, "reason", 'Invalid value: "": can have at most 128 characters'),
            ],
            id="length-limits",
        ),
        pytest.param(
            event_v1(note="n" * 1025),
            [(INVALID, "message", 'Invalid value: "": can have at most 1024 characters')],
            id="note-1kb",
        ),
        pytest.param(
            event_v1(type="Fatal"),
            [(INVALID, "type", 'Invalid value: "": has invalid value: Fatal')],
            id="type",
        ),
        pytest.param(
            event_v1(series={"count": 1}),
            [
                (INVALID, "series.count", 'Invalid value: "": should be at least 2'),
                (REQUIRED, "series.lastObservedTime", "Required value"),
            ],
            id="series",
        ),
        pytest.param(
            event_v1(
                deprecatedCount=2,
                deprecatedFirstTimestamp="2026-12-08T00:00:00Z",
                deprecatedSource={"component": "kubelet"},
            ),
            [
                (INVALID, "firstTimestamp", 'Invalid value: "": needs to be unset'),
                (INVALID, "count", 'Invalid value: "": needs to be unset'),
                (INVALID, "source", 'Invalid value: "": needs to be unset'),
            ],
            id="deprecated-fields-unset",
        ),
    ],
)
async def test_create_validation(
    http: aiohttp.ClientSession, event: Obj, causes: list[tuple[str, str, str]]
) -> None:
    code, body = await call(http, "POST", path(EV1), event)

    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["group"] == "events.k8s.io"
    assert body["message"].startswith('Event.events.k8s.io "e" is invalid: ')
    assert _causes(body) == causes


async def test_core_create_keeps_legacy_rules(http: aiohttp.ClientSession) -> None:
    """A core/v1 write of the same object is held only to legacyValidateEvent."""
    code, _ = await call(http, "POST", path(CORE), core_event(type="Custom"))

    assert code == 201


@pytest.mark.parametrize(
    ("patch", "causes"),
    [
        pytest.param(
            {"note": "changed"},
            [(INVALID, "message", 'Invalid value: "changed": field is immutable')],
            id="note",
        ),
        pytest.param(
            {"reason": "Other"},
            [
                (INVALID, "reason", 'Invalid value: "Other": field is immutable'),
                (INVALID, "reason", 'Invalid value: "Other": field is immutable'),
            ],
            id="reason-twice-as-upstream",
        ),
        pytest.param(
            {"series": {"count": 1, "lastObservedTime": LATER}},
            [(INVALID, "series.count", 'Invalid value: "": should be at least 2')],
            id="series",
        ),
        pytest.param(
            {"reportingController": "other"},
            [(INVALID, "reportingController", 'Invalid value: "other": field is immutable')],
            id="reporting-controller",
        ),
    ],
)
async def test_update_validation(
    http: aiohttp.ClientSession, patch: Obj, causes: list[tuple[str, str, str]]
) -> None:
    await call(http, "POST", path(EV1), event_v1())

    code, body = await call(http, "PATCH", path(EV1, "e"), patch, STRATEGIC)

    assert (code, body["reason"]) == (422, "Invalid")
    assert _causes(body) == causes


async def test_core_update_may_change_message(http: aiohttp.ClientSession) -> None:
    await call(http, "POST", path(EV1), event_v1())

    code, body = await call(http, "PATCH", path(CORE, "e"), {"message": "x"}, STRATEGIC)

    assert (code, body["message"]) == (200, "x")
