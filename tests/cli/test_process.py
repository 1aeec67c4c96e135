"""`run_until_signal`, the life of every long-running command: SIGINT or SIGTERM stops the
component (exit code 0), a component that fails ends the command with exit code 1."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from draplane.cli.process import run_until_signal


@pytest.mark.parametrize(
    "sig",
    [pytest.param(signal.SIGINT, id="sigint"), pytest.param(signal.SIGTERM, id="sigterm")],
)
async def test_signal_cancels_the_component(sig: signal.Signals) -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def component() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def interrupt() -> None:
        await started.wait()
        os.kill(os.getpid(), sig)

    sender = asyncio.create_task(interrupt())
    async with asyncio.timeout(5):
        code = await run_until_signal(component, name="test")
    await sender
    assert code == 0
    assert cancelled.is_set()


async def test_failing_component_exits_1(caplog: pytest.LogCaptureFixture) -> None:
    async def component() -> None:
        raise RuntimeError("informer exploded")

    code = await run_until_signal(component, name="broken")
    assert code == 1
    assert [(r.getMessage(), str(r.exc_info[1])) for r in caplog.records if r.exc_info] == [
        ("broken failed", "informer exploded")
    ]
