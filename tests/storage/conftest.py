"""Fixtures for the storage conformance suite: one `store` fixture per backend, already started.

The etcd backend shares the session's etcd (`etcd_cluster`), each test under its own key
prefix; its revisions are etcd's, so a fresh store starts at etcd's current revision: tests
count revisions from `store.revision` at their start.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from draplane.storage import Storage
from draplane.storage.memory import MemoryStorage
from draplane.storage.sqlite import SqliteStorage
from draplane.testing.etcd import etcd_store

StoreFactory = Callable[..., Storage]


def _memory(request: pytest.FixtureRequest, _: Path, **kwargs: int) -> Storage:
    return MemoryStorage(**kwargs)


def _sqlite(request: pytest.FixtureRequest, tmp: Path, **kwargs: int) -> Storage:
    return SqliteStorage(str(tmp / "draplane.db"), **kwargs)


def _etcd(request: pytest.FixtureRequest, _: Path, **kwargs: int) -> Storage:
    return etcd_store(request.getfixturevalue("etcd_cluster").client_urls, **kwargs)


BACKENDS = [
    pytest.param(_memory, id="memory"),
    pytest.param(_sqlite, id="sqlite"),
    pytest.param(_etcd, id="etcd"),
]


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    factory: Callable[..., Storage] = request.param

    def make(**kwargs: int) -> Storage:
        return factory(request, tmp_path, **kwargs)

    return make


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The id of the backend under test ("memory", "sqlite", "etcd")."""
    return str(request.node.callspec.params["make_store"].__name__).strip("_")


@pytest.fixture
async def store(make_store: StoreFactory) -> AsyncIterator[Storage]:
    s = make_store()
    await s.start()
    yield s
    await s.close()
