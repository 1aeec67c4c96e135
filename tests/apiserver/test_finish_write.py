"""`finish_write`: a write outlives the handler that started it (a client that went away)."""

from __future__ import annotations

import asyncio

import pytest

from draplane.api import errors
from draplane.api.meta import Obj
from draplane.apiserver.resthandlers import finish_write
from draplane.testing.apistate import wait_for


class Write:
    """A two-step write that stops between its steps until `resume` is set."""

    def __init__(self, *, fail: bool = False) -> None:
        self.resume = asyncio.Event()
        self.steps: list[str] = []
        self.fail = fail

    async def run(self) -> Obj:
        self.steps.append("first")
        try:
            await self.resume.wait()
            if self.fail:
                raise errors.StatusError(409, "Conflict", "changed meanwhile")
            self.steps.append("second")
            return {"metadata": {"name": "p"}}
        finally:
            self.steps.append("ended")


async def test_the_handler_gets_the_written_object() -> None:
    write = Write()
    write.resume.set()

    assert await finish_write(write.run()) == {"metadata": {"name": "p"}}


async def test_the_handler_gets_the_write_error() -> None:
    write = Write(fail=True)
    write.resume.set()

    with pytest.raises(errors.StatusError) as caught:
        await finish_write(write.run())
    assert caught.value.code == 409


@pytest.mark.parametrize(
    ("fail", "steps"),
    [(False, ["first", "second", "ended"]), (True, ["first", "ended"])],
    ids=["succeeds", "fails"],
)
async def test_a_cancelled_handler_leaves_the_write_to_finish(fail: bool, steps: list[str]) -> None:
    write = Write(fail=fail)
    handler = asyncio.ensure_future(finish_write(write.run()))
    await wait_for(lambda: bool(write.steps))

    handler.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handler
    write.resume.set()
    await wait_for(lambda: "ended" in write.steps)

    assert write.steps == steps
