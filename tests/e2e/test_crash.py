"""Crash safety through the real request path: kill -9 the API server while a client writes
over HTTPS, restart it on the same data dir, and find every acknowledged write."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from draplane.api import errors, kinds
from draplane.client.rest import RESTClient

pytestmark = pytest.mark.slow

LISTENING = re.compile(rb"listening on https://127\.0\.0\.1:(\d+)")


async def start_apiserver(data_dir: Path) -> tuple[asyncio.subprocess.Process, int]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "draplane.cli.main",
        "apiserver",
        "--data-dir",
        str(data_dir),
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
    match = LISTENING.search(line)
    assert match, line
    return proc, int(match.group(1))


@pytest.fixture
async def processes() -> AsyncIterator[list[asyncio.subprocess.Process]]:
    procs: list[asyncio.subprocess.Process] = []
    yield procs
    for proc in procs:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_acknowledged_writes_survive_kill_9(
    tmp_path: Path,
    processes: list[asyncio.subprocess.Process],
) -> None:
    data_dir = tmp_path / "data"
    proc, _ = await start_apiserver(data_dir)
    processes.append(proc)
    client = RESTClient.from_kubeconfig(data_dir / "kubeconfig")
    acked: dict[str, str] = {}
    enough = asyncio.Event()

    async def writer(worker: int) -> None:
        for i in range(10_000):
            name = f"cm-{worker}-{i}"
            body = {"metadata": {"name": name}, "data": {"payload": "x" * 512}}
            try:
                created = await client.create(kinds.CONFIGMAPS, body, "default")
            except Exception:
                return
            acked[name] = created["metadata"]["resourceVersion"]
            if len(acked) >= 300:
                enough.set()

    writers = [asyncio.create_task(writer(w)) for w in range(8)]
    await asyncio.wait_for(enough.wait(), timeout=60)
    os.kill(proc.pid, signal.SIGKILL)
    await proc.wait()
    await asyncio.gather(*writers)
    await client.close()
    snapshot = dict(acked)
    assert len(snapshot) >= 300

    proc, _ = await start_apiserver(data_dir)
    processes.append(proc)
    client = RESTClient.from_kubeconfig(data_dir / "kubeconfig")
    try:
        stored = await client.list(kinds.CONFIGMAPS, "default")
        by_name = {o["metadata"]["name"]: o for o in stored["items"]}
        missing = [n for n in snapshot if n not in by_name]
        assert missing == []
        changed = [
            n for n, rv in snapshot.items() if by_name[n]["metadata"]["resourceVersion"] != rv
        ]
        assert changed == []
        assert int(stored["metadata"]["resourceVersion"]) >= max(
            int(rv) for rv in snapshot.values()
        )
        with pytest.raises(errors.StatusError) as err:
            await client.create(
                kinds.CONFIGMAPS, {"metadata": {"name": next(iter(snapshot))}}, "default"
            )
        assert err.value.code == 409
    finally:
        await client.close()
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), timeout=15)
    assert proc.returncode == 0
