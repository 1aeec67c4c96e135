"""The event loop every draplane command runs on: uvloop, or asyncio's own loop on request.

uvloop (libuv under a Cython loop, with its own TLS transport) runs the same coroutines as
asyncio's pure-Python selector loop and `sslproto`; a control plane of separate processes over
HTTPS spends a large share of every process in exactly that code (the event loop's callbacks,
socket reads and writes, TLS records). docs/benchmarks-history.md ("2026-12-06: the process
shape against its floor on 2 cores") measures both loops on the same runs.

`DRAPLANE_EVENT_LOOP=asyncio` in the environment runs a command, and every process it starts
(they inherit the environment), on asyncio's loop instead, for comparison or debugging; the
async tests run on the same loop as the commands.

uvloop starts subprocesses with fork() and exec() (libuv's spawn, where asyncio's loop uses
vfork or posix_spawn): gRPC's fork handlers, which grpcio's core turns on by default, then run
in every child, and one started while another thread is inside gRPC (the etcd store's client)
can die of SIGSEGV before its exec. draplane never forks without exec, so importing this module
turns them off (`GRPC_ENABLE_FORK_SUPPORT=false`, unless the environment says otherwise).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")

EVENT_LOOP_ENV = "DRAPLANE_EVENT_LOOP"
LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "uvloop": uvloop.new_event_loop,
    "asyncio": asyncio.new_event_loop,
}
DEFAULT_LOOP = "uvloop"

GRPC_FORK_SUPPORT_ENV = "GRPC_ENABLE_FORK_SUPPORT"
os.environ.setdefault(GRPC_FORK_SUPPORT_ENV, "false")


class UnknownEventLoop(ValueError):
    """The environment names an event loop draplane does not have."""


def chosen() -> str:
    """The name of the loop a command runs on (`EVENT_LOOP_ENV`, else `DEFAULT_LOOP`)."""
    name = os.environ.get(EVENT_LOOP_ENV, "").strip() or DEFAULT_LOOP
    if name not in LOOPS:
        raise UnknownEventLoop(
            f"{EVENT_LOOP_ENV}={name!r}: the event loop is one of {', '.join(sorted(LOOPS))}"
        )
    return name


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the chosen loop (Ctrl-C cancels `main` as asyncio.run does)."""
    try:
        factory = LOOPS[chosen()]
    except UnknownEventLoop:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
