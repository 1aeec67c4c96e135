"""The data dir through the real commands: `draplane apiserver` / `draplane up` refuse a store
that lost acknowledged writes with one error line and exit code 1 (no traceback), a restored
store started with `--restored-store` never reuses a resourceVersion, and every file of the
data dir is private."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from draplane.api import auth, kinds, versions
from draplane.apiserver.server import ApiServer
from draplane.client.local import LocalClient
from draplane.client.rest import RESTClient
from draplane.client.servermode import server_mode
from draplane.storage.factory import open_storage
from draplane.testing.commands import Command, Commands

pytestmark = pytest.mark.slow

WAL_HEADER = 32


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    cmds = Commands(tmp_path / "logs")
    yield cmds
    await cmds.close()


async def _start(commands: Commands, data_dir: Path, *extra: str) -> tuple[Command, RESTClient]:
    command = await commands.start("apiserver", "--data-dir", str(data_dir), "--port", "0", *extra)
    await command.wait_for_line("draplane apiserver listening")
    return command, RESTClient.from_kubeconfig(data_dir / "kubeconfig")


async def _create(client: RESTClient, count: int) -> list[str]:
    """Create `count` ConfigMaps one after the other; their resourceVersions."""
    rvs = []
    for i in range(count):
        body = {"metadata": {"name": f"cm-{i}"}, "data": {"v": "x" * 300}}
        created = await client.create(kinds.CONFIGMAPS, body, "default")
        rvs.append(created["metadata"]["resourceVersion"])
    return rvs


async def _used_data_dir(data_dir: Path) -> None:
    """A data dir an API server has run on: store with objects, certificates, tokens."""
    storage = open_storage("sqlite", str(data_dir))
    await storage.start()
    server = ApiServer(data_dir, port=0, storage=storage, mode=versions.CLASSIC)
    await server.start()
    try:
        client = LocalClient(server.handler, auth.ADMIN_USER)
        await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "a"}}, "default")
    finally:
        await server.stop()
        await storage.close()


def _delete(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def _empty(db: Path) -> None:
    _delete(db)
    db.write_bytes(b"")


def _assert_one_error_line(stderr: str, command: str, *fragments: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"draplane {command}: error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in stderr


@pytest.mark.parametrize("command", ["apiserver", "up"])
@pytest.mark.parametrize(
    ("damage", "state"),
    [
        pytest.param(_delete, "is missing", id="deleted"),
        pytest.param(_empty, "is empty", id="emptied"),
    ],
)
async def test_a_data_dir_whose_store_is_gone_refuses_to_start(
    commands: Commands,
    tmp_path: Path,
    command: str,
    damage: Callable[[Path], None],
    state: str,
) -> None:
    data_dir = tmp_path / "data"
    await _used_data_dir(data_dir)
    damage(data_dir / "draplane.db")

    result = await commands.run(command, "--data-dir", str(data_dir), "--port", "0")

    assert result.code == 1
    _assert_one_error_line(
        result.stderr, command, state, "acknowledged writes are lost", "--restored-store"
    )
    assert not (data_dir / "draplane.db").exists() or state == "is empty"


async def test_a_data_dir_keeps_its_mode_without_the_flag_and_refuses_another(
    commands: Commands, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    await _used_data_dir(data_dir)  # an in-process API server: 1.28

    refused = await commands.run(
        "up", "--data-dir", str(data_dir), "--port", "0", "--kubernetes-version", "1.36"
    )
    _, client = await _start(commands, data_dir)
    try:
        mode = await server_mode(client)
        kept = await client.get(kinds.CONFIGMAPS, "a", "default")
    finally:
        await client.close()

    assert refused.code == 1
    _assert_one_error_line(
        refused.stderr, "up", "holds a Kubernetes 1.28 cluster", "--kubernetes-version 1.28"
    )
    assert mode is versions.CLASSIC
    assert kept["metadata"]["name"] == "a"


def _truncate_wal(db: Path, frames: int) -> None:
    wal = Path(f"{db}-wal")
    frame = 24 + int.from_bytes(wal.read_bytes()[8:12], "big")
    os.truncate(wal, WAL_HEADER + frames * frame)


async def test_a_truncated_wal_is_refused_and_a_restored_store_never_reuses_a_version(
    commands: Commands, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    server, client = await _start(commands, data_dir)
    acked = [int(rv) for rv in await _create(client, 30)]
    await client.close()
    server.proc.send_signal(signal.SIGKILL)
    await server.proc.wait()
    _truncate_wal(data_dir / "draplane.db", frames=8)

    refused = await commands.run("apiserver", "--data-dir", str(data_dir), "--port", "0")
    _, client = await _start(commands, data_dir, "--restored-store")
    try:
        listed = await client.list(kinds.CONFIGMAPS, "default")
        created = await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "new"}}, "default")
        stream = await client.watch(kinds.CONFIGMAPS, "default", resource_version=str(acked[5]))
        first = await asyncio.wait_for(anext(aiter(stream)), 10)
        await stream.close()
    finally:
        await client.close()

    assert refused.code == 1
    _assert_one_error_line(
        refused.stderr, "apiserver", f"resourceVersions up to {acked[-1]} were issued", "-wal"
    )
    assert len(listed["items"]) < 30
    assert int(listed["metadata"]["resourceVersion"]) >= acked[-1]
    assert int(created["metadata"]["resourceVersion"]) > acked[-1]
    assert (first.type, first.object["code"]) == ("ERROR", 410)


async def test_every_file_of_the_data_dir_is_private(commands: Commands, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    old_umask = os.umask(0o022)
    try:
        server, client = await _start(commands, data_dir)
        await _create(client, 1)
        await client.close()
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in data_dir.iterdir()}
        assert (await server.stop())[0] == 0
    finally:
        os.umask(old_umask)

    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert {"draplane.db", "draplane.db-wal", "tokens", "ca.key", "kubeconfig"} <= set(modes)
    assert {name: mode for name, mode in modes.items() if mode != 0o600} == {}
