"""open_storage: which backend each --store spec names, and clear errors for the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.api.kinds import PODS
from draplane.storage.factory import open_storage
from draplane.storage.memory import MemoryStorage
from draplane.storage.sqlite import SqliteStorage
from draplane.testing.builders import make_pod


async def test_memory() -> None:
    assert isinstance(open_storage("memory", None), MemoryStorage)


@pytest.mark.parametrize(
    ("spec", "expected_file"),
    [
        pytest.param("sqlite", "data/draplane.db", id="data-dir"),
        pytest.param("sqlite://{tmp}/other.db", "other.db", id="absolute-url"),
    ],
)
async def test_sqlite_writes_the_named_file(tmp_path: Path, spec: str, expected_file: str) -> None:
    store = open_storage(spec.format(tmp=tmp_path), str(tmp_path / "data"))
    assert isinstance(store, SqliteStorage)
    await store.start()
    await store.create(PODS.key, make_pod("a").obj())
    await store.close()

    assert (tmp_path / expected_file).exists()


@pytest.mark.parametrize(
    ("spec", "data_dir", "message"),
    [
        pytest.param("sqlite", None, "needs a data directory", id="sqlite-without-data-dir"),
        pytest.param("sqlite://", "/tmp", "missing database file path", id="url-without-path"),
        pytest.param("etcd://127.0.0.1:2379", None, "unsupported store", id="etcd-url"),
        pytest.param("etcd", None, "needs a data directory", id="local-etcd-without-data-dir"),
        pytest.param("postgres", None, "unsupported store", id="unknown"),
    ],
)
def test_bad_spec_is_value_error(spec: str, data_dir: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_storage(spec, data_dir)
