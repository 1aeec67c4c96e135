"""`open_storage`: builds the backend a `--store` spec names ("memory", "sqlite", "sqlite:///f.db").

The returned storage is not started yet: the caller awaits `start()`. The data dir is created
0700 (see `storage.files`).
"""

from __future__ import annotations

import os

from draplane.storage import files
from draplane.storage.interface import Storage
from draplane.storage.memory import MemoryStorage
from draplane.storage.sqlite import SqliteStorage

DB_FILE = "draplane.db"
_SQLITE_URL = "sqlite://"


def open_storage(spec: str, data_dir: str | None, *, restored: bool = False) -> Storage:
    """A `Storage` for `spec`; ValueError (a 400-style usage error) for an unknown or bad spec.
    `restored`: see `SqliteStorage` (the operator restored the database from a backup)."""
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
        f'unsupported store {spec!r}: use "memory", "sqlite" or "sqlite:///path/file.db"'
    )
