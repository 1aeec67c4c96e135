"""Running `draplane` commands as real processes from tests: `Commands` starts them (stderr to a
file, stdout readable line by line), runs one-shot ones to completion, and stops whatever is
still running in its `close()` (SIGTERM, then SIGKILL), so no test leaves a process behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

_SCRIPT = Path(sys.executable).parent / "draplane"
DRAPLANE: tuple[str, ...] = (
    (str(_SCRIPT),) if _SCRIPT.exists() else (sys.executable, "-m", "draplane.cli.main")
)
"""The installed console script, as a user runs it (the module when it is not installed)."""

STOP_TIMEOUT = 10.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Command:
    """One running `draplane` process."""

    args: tuple[str, ...]
    proc: asyncio.subprocess.Process
    stderr_path: Path
    _stderr_file: IO[bytes]
    stdout_lines: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        self._stderr_file.flush()
        return self.stderr_path.read_text(errors="replace")

    async def wait_for_line(self, prefix: str, *, timeout: float = 30.0) -> str:
        """The next stdout line starting with `prefix` (earlier lines go to `stdout_lines`)."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.proc.stdout.readline()
                if not raw:
                    await self.proc.wait()
                    raise AssertionError(
                        f"draplane {' '.join(self.args)} exited ({self.proc.returncode}) before "
                        f"printing {prefix!r}; stderr:\n{self.stderr}"
                    )
                line = raw.decode().rstrip("\n")
                self.stdout_lines.append(line)
                if line.startswith(prefix):
                    return line

    async def stop(self, sig: signal.Signals = signal.SIGINT) -> tuple[int, float]:
        """Send `sig` and wait for the exit: (exit code, seconds it took)."""
        start = time.monotonic()
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
        async with asyncio.timeout(STOP_TIMEOUT):
            code = await self.proc.wait()
        return code, time.monotonic() - start


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


@dataclass
class Commands:
    """Starts `draplane` processes with their stderr in `log_dir`; `close()` stops them all."""

    log_dir: Path
    running: list[Command] = field(default_factory=list)

    async def start(self, *args: str) -> Command:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        path = self.log_dir / f"{len(self.running)}-{args[0]}.stderr"
        stderr_file = path.open("wb")
        proc = await asyncio.create_subprocess_exec(
            *DRAPLANE,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr_file,
        )
        command = Command(args, proc, path, stderr_file)
        self.running.append(command)
        return command

    async def run(self, *args: str, timeout: float = 30.0) -> Result:
        """Run a command to completion."""
        proc = await asyncio.create_subprocess_exec(
            *DRAPLANE,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(timeout):
                out, err = await proc.communicate()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode is not None
        return Result(proc.returncode, out.decode(), err.decode())

    async def close(self) -> None:
        """Stop every process still running: SIGTERM, then SIGKILL after a grace period."""
        for command in self.running:
            if command.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    command.proc.terminate()
        for command in self.running:
            try:
                async with asyncio.timeout(STOP_TIMEOUT):
                    await command.proc.wait()
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    command.proc.kill()
                await command.proc.wait()
            command._stderr_file.close()
