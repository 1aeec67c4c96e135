"""NodeResourcesFit's pluginConfig args of the wrong shape: a 422 Status with field paths, never
a Python exception (`draplane scheduler --config` reports it as a configuration error)."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api.errors import StatusError
from draplane.scheduler.plugins import noderesources


@pytest.mark.parametrize(
    ("args", "fields"),
    [
        pytest.param({"scoringStrategy": "x"}, ["args.scoringStrategy"], id="strategy-not-object"),
        pytest.param(
            {"scoringStrategy": {"resources": "x"}},
            ["args.scoringStrategy.resources"],
            id="resources-not-list",
        ),
        pytest.param(
            {"scoringStrategy": {"resources": ["cpu"]}},
            ["args.scoringStrategy.resources[0]"],
            id="resource-not-object",
        ),
        pytest.param(
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": "x"}]}},
            ["args.scoringStrategy.resources[0].weight"],
            id="weight-not-integer",
        ),
    ],
)
def test_malformed_args_are_invalid(args: dict[str, Any], fields: list[str]) -> None:
    with pytest.raises(StatusError) as info:
        noderesources.new(args, None)  # type: ignore[arg-type]
    assert info.value.code == 422
    assert [c["field"] for c in info.value.details["causes"]] == fields
