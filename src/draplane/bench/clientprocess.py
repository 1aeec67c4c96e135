"""`ClientProcess`: the client side of the HTTP micro-benchmarks (`httpcost`, `httpfloor`), a
child `python -m MODULE ...` that prints `READY` once set up, starts on "go" (or on its own),
and prints its CPU seconds as `CPU <seconds>` before it exits."""

from __future__ import annotations

import asyncio
import sys


class ClientProcess:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._stdin = process.stdin
        self._stdout = process.stdout

    @classmethod
    async def start(cls, module: str, *args: str) -> ClientProcess:
        """Runs `python -m module args...` and waits for its READY line."""
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        child = cls(process)
        line = await child._stdout.readline()
        if not line.startswith(b"READY"):
            await process.wait()
            raise RuntimeError(f"the client process did not start: {line!r}")
        return child

    async def go(self) -> None:
        self._stdin.write(b"go\n")
        await self._stdin.drain()

    async def cpu_seconds(self) -> float:
        """Waits for the child to finish; the CPU seconds it reported."""
        result = b""
        while line := await self._stdout.readline():
            if line.startswith(b"CPU"):
                result = line
        await self._process.wait()
        if not result:
            raise RuntimeError(f"the client process exited {self._process.returncode} silently")
        return float(result.split()[1])
