"""klog's text and JSON formats for V-level, warning and error records."""

from __future__ import annotations

import logging

import orjson
import pytest

from draplane.cli.logs import JsonFormatter, KlogFormatter
from draplane.klog import V2, V6, level_for_verbosity


def record(level: int) -> logging.LogRecord:
    return logging.LogRecord("draplane.test", level, __file__, 7, "hello %s", ("there",), None)


@pytest.mark.parametrize(
    ("level", "letter", "v"),
    [
        pytest.param(V6, "I", 6, id="v6"),
        pytest.param(V2, "I", 2, id="v2"),
        pytest.param(logging.INFO, "I", 0, id="v0"),
        pytest.param(logging.WARNING, "W", 0, id="warning"),
        pytest.param(logging.ERROR, "E", 0, id="error"),
    ],
)
def test_formats(level: int, letter: str, v: int) -> None:
    text = KlogFormatter().format(record(level))
    assert text[0] == letter
    assert text.endswith("test_log_format.py:7] hello there")
    entry = orjson.loads(JsonFormatter().format(record(level)))
    assert (entry["v"], entry["msg"]) == (v, "hello there")


@pytest.mark.parametrize(
    ("verbosity", "passes", "blocked"),
    [
        pytest.param(0, logging.INFO, V2, id="v0"),
        pytest.param(2, V2, V2 - 1, id="v2"),
        pytest.param(6, V6, V6 - 1, id="v6"),
    ],
)
def test_verbosity_threshold(verbosity: int, passes: int, blocked: int) -> None:
    threshold = level_for_verbosity(verbosity)
    assert passes >= threshold > blocked
