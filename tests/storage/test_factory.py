"""open_storage: which backend each --store spec names, and clear errors for the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.api.kinds import PODS
from draplane.storage.etcd import EtcdStorage
from draplane.storage.etcd_flags import EtcdFlags, store_spec
from draplane.storage.etcd_local import LocalEtcdStorage
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


@pytest.mark.parametrize(
    ("flags", "kind", "servers", "prefix"),
    [
        pytest.param(
            EtcdFlags(servers="http://10.0.0.1:2379,http://10.0.0.2:2379", prefix="/k8s"),
            EtcdStorage,
            ("http://10.0.0.1:2379", "http://10.0.0.2:2379"),
            "/k8s",
            id="etcd-servers",
        ),
        pytest.param(EtcdFlags(), LocalEtcdStorage, None, "/registry", id="local-etcd"),
    ],
)
def test_etcd_store_from_flags(
    tmp_path: Path, flags: EtcdFlags, kind: type, servers: tuple[str, ...] | None, prefix: str
) -> None:
    store = open_storage("etcd", str(tmp_path), etcd=flags)

    assert type(store) is kind
    assert isinstance(store, EtcdStorage)
    assert store.layout.prefix == prefix
    if servers is not None:
        assert store.config.servers == servers
    else:
        assert store.config.servers[0].startswith("http://127.0.0.1:")
        assert (tmp_path / "etcd" / "ports.json").exists()


@pytest.mark.parametrize(
    "servers",
    [pytest.param("10.0.0.1:2379", id="no-scheme"), pytest.param("http://h", id="no-port")],
)
def test_bad_etcd_servers_is_value_error(servers: str) -> None:
    with pytest.raises(ValueError, match="--etcd-servers"):
        open_storage("etcd", None, etcd=EtcdFlags(servers=servers))


@pytest.mark.parametrize(
    ("store", "servers", "expected"),
    [
        pytest.param(None, "", "sqlite", id="default"),
        pytest.param(None, "http://10.0.0.1:2379", "etcd", id="etcd-servers-alone-select-etcd"),
        pytest.param("etcd", "http://10.0.0.1:2379", "etcd", id="both"),
        pytest.param("memory", "", "memory", id="explicit-store"),
    ],
)
def test_store_spec(store: str | None, servers: str, expected: str) -> None:
    assert store_spec(store, EtcdFlags(servers=servers)) == expected


@pytest.mark.parametrize("store", ["sqlite", "memory", "sqlite:///tmp/x.db"])
def test_etcd_servers_with_another_store_is_refused(store: str) -> None:
    with pytest.raises(
        ValueError, match=f"--etcd-servers needs --store etcd \\(got --store {store}\\)"
    ):
        store_spec(store, EtcdFlags(servers="http://10.0.0.1:2379"))
