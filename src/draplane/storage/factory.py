"""`open_storage`: builds the backend a `--store` spec names ("memory", "sqlite", "sqlite:///f.db",
"etcd": the `--etcd-*` flags' cluster, or a local single-member etcd in the data dir).

The returned storage is not started yet: the caller awaits `start()`. The data dir is created
0700 (see `storage.files`).
"""

from __future__ import annotations

import os

from draplane.storage import files
from draplane.storage.etcd import EtcdStorage
from draplane.storage.etcd_flags import EtcdFlags
from draplane.storage.etcd_local import LocalEtcdStorage
from draplane.storage.etcd_rpc import EtcdConfig
from draplane.storage.interface import Storage
from draplane.storage.memory import MemoryStorage
from draplane.storage.sqlite import SqliteStorage

DB_FILE = "draplane.db"
_SQLITE_URL = "sqlite://"


def open_storage(
    spec: str, data_dir: str | None, *, restored: bool = False, etcd: EtcdFlags | None = None
) -> Storage:
    """A `Storage` for `spec`; ValueError (a 400-style usage error) for an unknown or bad spec.
    `restored`: see `SqliteStorage` (the operator restored the database from a backup)."""
    if spec == "etcd":
        return _etcd(data_dir, etcd or EtcdFlags())
    if spec == "memory":
        return MemoryStorage()
    if spec == "sqlite":
        if not data_dir:
            raise ValueError('store "sqlite" needs a data directory')
        files.private_dir(data_dir)
        return SqliteStorage(os.path.join(data_dir, DB_FILE), restored=restored)
    if spec.startswith(_SQLITE_URL):
        # As for file URLs: sqlite:///var/x.db is the absolute /var/x.db; sqlite://x.db is relative.
        path = spec[len(_SQLITE_URL) :]
        if not path:
            raise ValueError(f"store {spec!r}: missing database file path")
        return SqliteStorage(path, restored=restored)
    raise ValueError(
        f'unsupported store {spec!r}: use "memory", "sqlite", "sqlite:///path/file.db" or "etcd"'
    )


def _etcd(data_dir: str | None, flags: EtcdFlags) -> Storage:
    interval = flags.compaction_interval
    if not flags.servers:
        if not data_dir:
            raise ValueError('store "etcd" without --etcd-servers needs a data directory')
        files.private_dir(data_dir)
        return LocalEtcdStorage(data_dir, prefix=flags.prefix, compaction_interval=interval)
    config = EtcdConfig.from_flags(
        flags.servers,
        prefix=flags.prefix,
        ca_file=flags.ca_file,
        cert_file=flags.cert_file,
        key_file=flags.key_file,
    )
    return EtcdStorage(config, compaction_interval=interval)
