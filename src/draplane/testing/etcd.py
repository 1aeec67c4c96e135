"""etcd for tests: one real etcd (the installed binary, `storage.etcd_process`) per test session,
started on first use, and stores on it isolated per test by key prefix.

    store = etcd_store(servers)          # EtcdStorage under a fresh /draplane-test-N prefix
"""

from __future__ import annotations

import itertools
from typing import Any

from draplane.storage.etcd import EtcdStorage
from draplane.storage.etcd_rpc import EtcdConfig

_prefixes = itertools.count(1)


def fresh_prefix() -> str:
    return f"/draplane-test-{next(_prefixes)}/registry"


def etcd_store(servers: list[str], **kwargs: Any) -> EtcdStorage:
    """A store (not started) on `servers` under its own prefix, without periodic compaction."""
    kwargs.setdefault("compaction_interval", 0)
    kwargs.setdefault("start_timeout", 10.0)
    return EtcdStorage(EtcdConfig(tuple(servers), prefix=fresh_prefix()), **kwargs)
