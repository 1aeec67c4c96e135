"""The HTTP micro-benchmarks, `python -m draplane.bench.httpcost` (draplane's API server and
RESTClient) and `python -m draplane.bench.httpfloor` (aiohttp or a bare protocol with nothing
behind it): a short run of each mode completes, its client in a child process, and prints one
JSON line of CPU figures."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import orjson
import pytest

pytestmark = pytest.mark.slow

OVER_HTTP = {"server_ms_per_op", "client_ms_per_op", "wall_s"}


def _run(module: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    figures: dict[str, Any] = orjson.loads(done.stdout.splitlines()[-1])
    return figures


@pytest.mark.parametrize(
    ("mode", "transport", "figures"),
    [
        pytest.param("get", "http", OVER_HTTP, id="get"),
        pytest.param("update", "http", OVER_HTTP, id="put"),
        pytest.param("watch", "http", OVER_HTTP, id="watch"),
        pytest.param("get", "local", {"in_process_ms_per_op"}, id="get-local"),
    ],
)
def test_httpcost_run_prints_cpu_per_operation(
    mode: str, transport: str, figures: set[str]
) -> None:
    line = _run(
        "draplane.bench.httpcost", mode, "--transport", transport, "--count", "20",
        "--concurrency", "2",
    )  # fmt: skip

    assert (line["mode"], line["transport"], line["count"]) == (mode, transport, 20)
    assert set(line) - {"mode", "transport", "count", "concurrency"} == figures
    assert all(line[k] >= 0 for k in figures)


@pytest.mark.parametrize("server", ["aiohttp", "protocol"])
@pytest.mark.parametrize(("mode", "count"), [("get", 40), ("watch", 15)])
def test_httpfloor_run_prints_cpu_per_operation(mode: str, count: int, server: str) -> None:
    line = _run(
        "draplane.bench.httpfloor", mode, "--server", server, "--count", str(count),
        "--concurrency", "2",
    )  # fmt: skip

    assert (line["mode"], line["server"], line["count"], line["concurrency"]) == (
        mode, server, count, 2,
    )  # fmt: skip
    assert set(line) - {"mode", "server", "count", "concurrency"} == OVER_HTTP
    assert line["server_ms_per_op"] > 0
    assert line["client_ms_per_op"] > 0
