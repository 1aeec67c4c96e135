"""Stopping the scheduler: cancelling `Scheduler.run` stops the informers it started, whether
it was still waiting for their caches or already scheduling (standalone `draplane scheduler`
and `draplane up --transport http` close their client right after)."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.api.auth import SCHEDULER, UserInfo
from draplane.client.informer import InformerFactory
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.apistate import wait_for
from draplane.testing.cluster import start_cluster


def informer_tasks() -> list[str]:
    return sorted(
        t.get_name()
        for t in asyncio.all_tasks()
        if t.get_name().startswith("informer-") and not t.done()
    )


@pytest.mark.parametrize(
    "synced",
    [
        pytest.param(False, id="cancelled-while-waiting-for-caches"),
        pytest.param(True, id="cancelled-while-scheduling"),
    ],
)
async def test_run_stops_its_informers_when_cancelled(synced: bool) -> None:
    # Its own cluster, not the suite's fixture: the check that no informer task is left runs
    # after the cluster has stopped.
    cluster = await start_cluster()
    client = cluster.client(UserInfo(SCHEDULER))
    scheduler = Scheduler(
        client,
        informers=InformerFactory(client),
        metrics=CollectorRegistry(),
        mode=versions.CLASSIC,
    )
    task = asyncio.create_task(scheduler.run())
    try:
        await asyncio.sleep(0)
        if synced:
            await wait_for(scheduler.has_synced, what="scheduler synced")
        assert informer_tasks() != []
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await scheduler.wait_idle()
        await cluster.stop()
    assert task.cancelled()
    assert informer_tasks() == []
