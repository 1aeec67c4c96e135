"""Fixtures for the storage conformance suite: one `store` fixture per backend, already started."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from draplane.storage import Storage
from draplane.storage.memory import MemoryStorage

StoreFactory = Callable[..., Storage]


def _memory(_: Path, **kwargs: int) -> Storage:
    return MemoryStorage(**kwargs)


BACKENDS = [pytest.param(_memory, id="memory")]

try:
    from draplane.storage.sqlite import SqliteStorage

    def _sqlite(tmp: Path, **kwargs: int) -> Storage:
        return SqliteStorage(str(tmp / "draplane.db"), **kwargs)

    BACKENDS.append(pytest.param(_sqlite, id="sqlite"))
except ImportError:
    pass


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    factory: Callable[..., Storage] = request.param

    def make(**kwargs: int) -> Storage:
        return factory(tmp_path, **kwargs)

    return make


@pytest.fixture
async def store(make_store: StoreFactory) -> AsyncIterator[Storage]:
    s = make_store()
    await s.start()
    yield s
    await s.close()
