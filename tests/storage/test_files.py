"""Atomic private writes (`files.write_private`): writers racing on one path, as API server
replicas sharing a data dir do with its marker files, each replace it whole, none fails, and no
temporary file stays behind."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from draplane.storage import files


@pytest.mark.parametrize("writers", [1, 2, 8])
def test_racing_writers_each_replace_the_file_whole(tmp_path: Path, writers: int) -> None:
    path = tmp_path / "kubernetes-version"
    payloads = [f"{i}\n" * 1000 for i in range(writers)]

    def write(i: int) -> None:
        for _ in range(50):
            files.write_private(path, payloads[i])

    with ThreadPoolExecutor(writers) as pool:
        for done in [pool.submit(write, i) for i in range(writers)]:
            done.result()  # no writer failed
    assert path.read_text() in payloads
    assert stat.S_IMODE(path.stat().st_mode) == files.FILE_MODE
    assert [p.name for p in tmp_path.iterdir()] == ["kubernetes-version"]


def test_a_failed_replace_leaves_no_temporary_file(tmp_path: Path) -> None:
    taken = tmp_path / "token"
    (taken / "inside").mkdir(parents=True)  # a non-empty directory cannot be replaced
    with pytest.raises(OSError):
        files.write_private(taken, "new")
    assert [p.name for p in tmp_path.iterdir()] == ["token"]
    assert [p.name for p in taken.iterdir()] == ["inside"]
