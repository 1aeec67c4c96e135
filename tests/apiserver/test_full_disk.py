"""A full disk under the SQLite store, on a small tmpfs mounted for the test (skipped where mount
is not permitted): writes fail with 507 InsufficientStorage, /readyz reports the storage check
failing until space is freed, and a restart or a kubeconfig write says that the disk is full
(one error line, no temporary file left behind)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from draplane.api import errors, kinds, versions
from draplane.apiserver.kubeconfig import write_kubeconfig
from draplane.apiserver.server import ApiServer
from draplane.client.kubeconfig import load_kubeconfig
from draplane.client.rest import RESTClient
from draplane.storage.factory import open_storage
from draplane.storage.files import DiskFullError
from draplane.testing.commands import Commands

DISK_SIZE = "6m"


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE}", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


@contextlib.contextmanager
def filled(disk: Path) -> Iterator[None]:
    """Fill the disk to the last byte for the duration of the block."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (1 << 16, 1 << 9, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * chunk)
    finally:
        os.close(fd)
    try:
        yield
    finally:
        filler.unlink()


def _cm(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "data": {"v": "x" * 4000}}


@pytest.fixture
async def server(disk: Path) -> AsyncIterator[ApiServer]:
    data_dir = disk / "data"
    storage = open_storage("sqlite", str(data_dir))
    await storage.start()
    srv = ApiServer(data_dir, port=0, storage=storage, mode=versions.CLASSIC)
    await srv.start()
    yield srv
    await srv.stop()
    await storage.close()


async def _readyz(server: ApiServer) -> tuple[int, str]:
    ssl = load_kubeconfig(server.kubeconfig_path).ssl_context()
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ssl)) as session,
        session.get(f"{server.url}/readyz", params={"verbose": "1"}) as resp,
    ):
        return resp.status, await resp.text()


async def test_writes_fail_with_507_and_readyz_fails_until_space_is_freed(
    server: ApiServer, disk: Path
) -> None:
    client = RESTClient.from_kubeconfig(server.kubeconfig_path)
    try:
        await client.create(kinds.CONFIGMAPS, _cm("before"), "default")
        with filled(disk):
            failure: errors.StatusError | None = None
            for i in range(200):
                try:
                    await client.create(kinds.CONFIGMAPS, _cm(f"full-{i}"), "default")
                except errors.StatusError as err:
                    failure = err
                    break
            full_ready = await _readyz(server)
            still_readable = await client.get(kinds.CONFIGMAPS, "before", "default")
        freed_ready = await _readyz(server)
        after = await client.create(kinds.CONFIGMAPS, _cm("after"), "default")
    finally:
        await client.close()

    assert failure is not None
    assert (failure.code, failure.reason) == (507, "InsufficientStorage")
    assert "database or disk is full" in failure.message
    assert full_ready[0] == 500 and "[-]storage failed" in full_ready[1]
    assert still_readable["metadata"]["name"] == "before"
    assert freed_ready == (200, freed_ready[1]) and "[+]storage ok" in freed_ready[1]
    assert int(after["metadata"]["resourceVersion"]) > int(
        still_readable["metadata"]["resourceVersion"]
    )


def test_kubeconfig_write_on_a_full_disk_says_so_and_leaves_no_temporary_file(
    disk: Path,
) -> None:
    path = disk / "kubeconfig"
    write_kubeconfig(path, {"kind": "Config", "note": "old"})
    big = {"kind": "Config", "note": "x" * 200_000}

    with filled(disk), pytest.raises(DiskFullError) as exc:
        write_kubeconfig(path, big)

    assert "the disk is full" in str(exc.value)
    assert sorted(p.name for p in disk.iterdir()) == ["kubeconfig"]
    assert "old" in path.read_text()


@pytest.mark.slow
async def test_apiserver_restarted_on_a_full_disk_fails_with_one_error_line(
    disk: Path, tmp_path: Path
) -> None:
    data_dir = disk / "data"
    commands = Commands(tmp_path / "logs")
    try:
        first = await commands.start("apiserver", "--data-dir", str(data_dir), "--port", "0")
        await first.wait_for_line("draplane apiserver listening")
        assert (await first.stop())[0] == 0
        with filled(disk):
            result = await commands.run("apiserver", "--data-dir", str(data_dir), "--port", "0")
    finally:
        await commands.close()

    lines = result.stderr.strip().splitlines()
    assert result.code == 1
    assert len(lines) == 1 and lines[0].startswith("draplane apiserver: error: ")
    assert "the disk is full" in lines[0]
    assert not [p.name for p in data_dir.iterdir() if p.name.endswith(".tmp")]
