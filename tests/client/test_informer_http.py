"""An informer over HTTPS (RESTClient) against a server with a small watch history: a real 410
from the server makes it re-list, and objects deleted meanwhile arrive as tombstones."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from draplane.api.kinds import CONFIGMAPS
from draplane.api.meta import Obj
from draplane.client.informer import DeletedFinalStateUnknown, Informer
from draplane.storage.memory import MemoryStorage
from draplane.testing.apistate import wait_for
from draplane.testing.httpserver import start_http_server


def _cm(name: str, **data: str) -> Obj:
    return {"metadata": {"name": name, "namespace": "default"}, "data": data}


async def test_informer_relists_after_a_real_410_and_delivers_tombstones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="draplane.client.informer")
    srv = await start_http_server(tmp_path, storage=MemoryStorage(history_size=3), watch_history=3)
    try:
        rest = srv.client()
        await rest.create(CONFIGMAPS, _cm("gone"))
        await rest.create(CONFIGMAPS, _cm("kept", v="1"))
        informer = Informer(rest, CONFIGMAPS, namespace="default")
        calls: list[tuple[str, str]] = []

        def on_delete(obj: Obj | DeletedFinalStateUnknown) -> None:
            tombstone = isinstance(obj, DeletedFinalStateUnknown)
            key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else obj["metadata"]["name"]
            calls.append(("tombstone" if tombstone else "delete", key))

        informer.add_handler(
            on_add=lambda o: calls.append(("add", o["metadata"]["name"])),
            on_update=lambda _, n: calls.append(("update", n["metadata"]["name"])),
            on_delete=on_delete,
        )
        task = asyncio.create_task(informer.run())
        cache = srv.registry.watch_cache
        await wait_for(lambda: cache.watcher_count(CONFIGMAPS.key) == 1)
        synced_rv = int(informer.last_sync_resource_version)

        # In one step of the event loop (MemoryStorage writes never suspend): end the
        # informer's watch, then write more than the retained history, so its re-watch from
        # `synced_rv` is too old.
        store = srv.storage
        assert cache.close_watchers(CONFIGMAPS.key) == 1
        await store.delete(CONFIGMAPS.key, "default", "gone")
        kept = await store.get(CONFIGMAPS.key, "default", "kept")
        assert kept is not None
        await store.update(CONFIGMAPS.key, {**kept, "data": {"v": "2"}})
        for i in range(4):
            await store.create(
                CONFIGMAPS.key, {**_cm(f"new{i}"), "kind": "ConfigMap", "apiVersion": "v1"}
            )
        assert store.oldest_revision - 1 > synced_rv

        await wait_for(lambda: ("tombstone", "default/gone") in calls)
        await wait_for(lambda: informer.lister.get("new3", "default") is not None)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        lists = sum(
            sample.value
            for family in srv.server.metrics.collect()
            for sample in family.samples
            if sample.name == "apiserver_request_total"
            and (sample.labels["verb"], sample.labels["resource"], sample.labels["code"])
            == ("LIST", "configmaps", "200")
        )
    finally:
        await srv.stop()

    assert calls[:2] == [("add", "gone"), ("add", "kept")]
    assert sorted(calls[2:]) == sorted(
        [("update", "kept"), ("tombstone", "default/gone")] + [("add", f"new{i}") for i in range(4)]
    )
    assert lists == 2
    # Re-listed because of the 410, not after a failure (which logs a warning and backs off).
    informer_logs = [r for r in caplog.records if r.name == "draplane.client.informer"]
    assert [r.getMessage() for r in informer_logs] == [
        "informer configmaps: resourceVersion too old, re-listing"
    ]
    assert informer.lister.get("gone", "default") is None
    kept = informer.lister.get("kept", "default")
    assert kept is not None and kept["data"] == {"v": "2"}
