"""`python -m draplane.bench.httpfloor`: each mode and server completes a short run over TLS
with its client in a child process, and prints one JSON line of CPU figures."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest


@pytest.mark.parametrize("server", ["aiohttp", "protocol"])
@pytest.mark.parametrize(("mode", "count"), [("get", 40), ("watch", 15)])
def test_httpfloor_run_prints_cpu_per_operation(mode: str, count: int, server: str) -> None:
    args = [mode, "--server", server, "--count", str(count), "--concurrency", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "draplane.bench.httpfloor", *args],
        capture_output=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr.decode()
    figures = orjson.loads(done.stdout.splitlines()[-1])
    assert {k: figures[k] for k in ("mode", "server", "count", "concurrency")} == {
        "mode": mode,
        "server": server,
        "count": count,
        "concurrency": 2,
    }
    assert figures["server_ms_per_op"] > 0
    assert figures["client_ms_per_op"] > 0
