"""Fixtures of the hostile-input tests (test_fuzz*.py): one seeded API server per module.

`hostile` is a `draplane.testing.hostile.Hostile` bound to the test's log records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from draplane.testing.hostile import Hostile, seed
from draplane.testing.httpserver import start_http_server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Hostile]:
    server = await start_http_server(tmp_path_factory.mktemp("hostile"))
    # A resourceVersion from the future waits this long before its 504 (3 s upstream).
    server.registry.lists = dataclasses.replace(server.registry.lists, fresh_timeout=0.01)
    async with server.session() as http:
        yield Hostile(server, http, await seed(server))
    await server.stop()


@pytest.fixture
def hostile(hostile_server: Hostile, caplog: pytest.LogCaptureFixture) -> Hostile:
    hostile_server.records = lambda: caplog.records
    hostile_server.clear_records = caplog.clear
    return hostile_server
