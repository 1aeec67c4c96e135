"""DynamicResourcesArgs of the structured plugin (pluginConfig): `filterTimeout` and
`bindingTimeout` with upstream's defaults and validation messages, and Filter answering
"timed out trying to allocate devices" (UnschedulableAndUnresolvable) once one node's
allocation takes longer than `filterTimeout` (0 disables it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from draplane.api import versions
from draplane.api.errors import StatusError
from draplane.scheduler.framework import SUCCESS, CycleState, Status
from draplane.scheduler.plugins.dynamicresources import StructuredDynamicResources, new
from draplane.scheduler.plugins.dynamicresources.args import (
    DynamicResourcesArgs,
    parse_args,
    parse_duration,
)
from draplane.testing.builders import make_node, make_pod
from draplane.testing.claimstore import ClaimStore, node_infos, pod_info, structured_handle
from draplane.testing.structured import (
    make_device_class,
    make_resource_slice,
    make_structured_claim,
)

DRIVER = "driver.example.com"
CLASS = make_device_class("gpu", DRIVER).obj()
SLICE = (
    make_resource_slice("a", DRIVER, "node-a")
    .node("node-a")
    .device(*(f"dev-{i}" for i in range(8)))
    .obj()
)
CLAIM = make_structured_claim("claim").uid("claim-uid").request("gpu", "gpu", count=4).obj()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(None, DynamicResourcesArgs(10.0, 600.0), id="defaults"),
        pytest.param({}, DynamicResourcesArgs(10.0, 600.0), id="empty"),
        pytest.param({"filterTimeout": "0s"}, DynamicResourcesArgs(0.0, 600.0), id="disabled"),
        pytest.param(
            {"filterTimeout": "1m30s", "bindingTimeout": "1s"},
            DynamicResourcesArgs(90.0, 1.0),
            id="both",
        ),
    ],
)
def test_args(args: dict[str, Any] | None, expected: DynamicResourcesArgs) -> None:
    assert parse_args(args) == expected


@pytest.mark.parametrize(
    ("args", "causes"),
    [
        pytest.param(
            {"filterTimeout": "-1s"},
            [("args.filterTimeout", "must be zero or positive")],
            id="negative-filter-timeout",
        ),
        pytest.param(
            {"bindingTimeout": "500ms"},
            [("args.bindingTimeout", "must be at least 1 second")],
            id="short-binding-timeout",
        ),
        pytest.param(
            {"filterTimeout": "ten"},
            [("args.filterTimeout", 'time: invalid duration "ten"')],
            id="not-a-duration",
        ),
        pytest.param(
            {"filterTimeout": 10},
            [("args.filterTimeout", "must be a duration string")],
            id="number",
        ),
        pytest.param(
            {"timeout": "1s"}, [("args.timeout", "not supported by draplane")], id="unknown"
        ),
    ],
)
def test_bad_args_are_invalid(args: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    with pytest.raises(StatusError) as info:
        parse_args(args)

    assert info.value.code == 422
    got = [(c["field"], c["message"]) for c in info.value.details["causes"]]
    assert [field for field, _ in got] == [field for field, _ in causes]
    assert all(message.endswith(text) for (_, message), (_, text) in zip(got, causes, strict=True))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0.0), ("10s", 10.0), ("1h2m", 3720.0), ("1.5s", 1.5), ("250ms", 0.25), ("-2s", -2.0)],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


def _plugin(args: dict[str, Any] | None) -> StructuredDynamicResources:
    handle = structured_handle(ClaimStore([CLAIM]), classes=[CLASS], slices=[SLICE])
    plugin = new(args, handle)
    assert isinstance(plugin, StructuredDynamicResources)
    return plugin


def _ticking(step: float) -> Callable[[], float]:
    """A clock that advances `step` seconds at every reading."""
    now = [0.0]

    def read() -> float:
        now[0] += step
        return now[0]

    return read


@pytest.mark.parametrize(
    ("args", "step", "expected"),
    [
        pytest.param(
            None,
            11.0,  # past the deadline at the first check, before any device is looked at
            Status.unresolvable("timed out trying to allocate devices"),
            id="default-10s-exceeded",
        ),
        pytest.param(None, 0.001, SUCCESS, id="default-10s-in-time"),
        pytest.param({"filterTimeout": "0s"}, 6.0, SUCCESS, id="zero-disables"),
        pytest.param({"filterTimeout": "1h"}, 6.0, SUCCESS, id="long-timeout"),
    ],
)
def test_filter_timeout(args: dict[str, Any] | None, step: float, expected: Status) -> None:
    plugin = _plugin(args)
    plugin.monotonic = _ticking(step)
    state, info = (
        CycleState(),
        pod_info(
            make_pod("pod").uid("pod-uid").claim_ref("c0", "claim", mode=versions.STRUCTURED).obj()
        ),
    )
    assert plugin.pre_filter(state, info) == SUCCESS

    [node] = node_infos(make_node("node-a").obj())
    assert plugin.filter(state, info, node) == expected
