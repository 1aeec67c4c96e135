"""`draplane apiserver` restarted on the same data dir (SQLite): every object keeps its
resourceVersion, a watch resumes from a revision taken before the restart, and an Exact list
at that revision is served from the persisted history."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from draplane.api import kinds
from draplane.api.handler import WatchEvent
from draplane.client.rest import RESTClient
from draplane.testing.commands import Command, Commands

LISTENING = re.compile(r"listening on (https://127\.0\.0\.1:\d+)")


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    cmds = Commands(tmp_path / "logs")
    yield cmds
    await cmds.close()


async def _start(commands: Commands, data_dir: Path) -> tuple[Command, RESTClient]:
    command = await commands.start("apiserver", "--data-dir", str(data_dir), "--port", "0")
    line = await command.wait_for_line("draplane apiserver listening")
    assert LISTENING.search(line)
    return command, RESTClient.from_kubeconfig(data_dir / "kubeconfig")


def _cm(name: str, value: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "data": {"v": value}}


@pytest.mark.slow
async def test_objects_and_watch_resume_survive_a_restart(
    commands: Commands, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    command, client = await _start(commands, data_dir)
    a = await client.create(kinds.CONFIGMAPS, _cm("a", "1"), "default")
    mark = (await client.list(kinds.CONFIGMAPS, "default"))["metadata"]["resourceVersion"]
    await client.create(kinds.CONFIGMAPS, _cm("b", "1"), "default")
    patched = await client.patch(kinds.CONFIGMAPS, "a", {"data": {"v": "2"}}, "default")
    before = await client.list(kinds.CONFIGMAPS, "default")
    await client.close()
    assert (await command.stop())[0] == 0

    command, client = await _start(commands, data_dir)
    try:
        after = await client.list(kinds.CONFIGMAPS, "default")
        snapshot = await client.request(
            "GET",
            "/api/v1/namespaces/default/configmaps",
            params={"resourceVersion": mark, "resourceVersionMatch": "Exact"},
        )
        stream = await client.watch(kinds.CONFIGMAPS, "default", resource_version=mark)
        events = aiter(stream)
        replayed = [await asyncio.wait_for(anext(events), 5) for _ in range(2)]
        await client.create(kinds.CONFIGMAPS, _cm("c", "1"), "default")
        live = await asyncio.wait_for(anext(events), 5)
        await stream.close()
    finally:
        await client.close()

    assert after["items"] == before["items"]
    # The restarted server listens on another port: it rewrote the `kubernetes` Service, its
    # Endpoints and EndpointSlice, so the store's revision moved on (no ConfigMap changed).
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    assert [(o["metadata"]["name"], o["data"]) for o in snapshot["items"]] == [("a", {"v": "1"})]
    assert snapshot["items"][0]["metadata"]["resourceVersion"] == a["metadata"]["resourceVersion"]
    assert _summary(replayed) == [("ADDED", "b", "1"), ("MODIFIED", "a", "2")]
    assert (
        replayed[1].object["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]
    )
    assert _summary([live]) == [("ADDED", "c", "1")]


def _summary(events: list[WatchEvent]) -> list[tuple[str, str, str]]:
    return [(e.type, e.object["metadata"]["name"], e.object["data"]["v"]) for e in events]
