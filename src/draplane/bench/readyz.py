"""The `/readyz` probe the scale workloads run beside the control plane: `GET /readyz` over
HTTPS every `interval` seconds, anonymous, from a process of its own, as a load balancer or
kubelet probes an API server.

The probe runs in its own process so that what it measures is the API server's answer time:
run in the benchmark's event loop it would also measure the loop's own turns, which carry the
in-process components and the pod creators. `python -m draplane.bench.readyz URL --ca FILE`
prints one line per probe, `<seconds> <status>` (status 0: no answer within 30 s);
`ReadyzProbe` starts it, collects the lines and reports p50, p99 and max.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ssl
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from draplane import eventloop
from draplane.bench.stats import percentile

READYZ_INTERVAL = 0.25
TIMEOUT_S = 30.0


class ReadyzProbe:
    """The probe process and the latencies (seconds, request start to answer body) it
    reported."""

    def __init__(self, url: str, ca_file: Path, *, interval: float = READYZ_INTERVAL) -> None:
        self._url = url.rstrip("/") + "/readyz"
        self._ca_file = ca_file
        self._interval = interval
        self.latencies: list[float] = []
        self.failures = 0
        self._child: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "draplane.bench.readyz", self._url,
            "--ca", str(self._ca_file), "--interval", str(self._interval),
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert self._child.stdout is not None
        # The first answer: the probe is up before the measured phase starts.
        first = await self._child.stdout.readline()
        if not first:
            raise RuntimeError(f"the readyz probe exited with {await self._child.wait()}")
        self._record(first)
        self._reader = asyncio.create_task(self._read(), name="bench-readyz-reader")

    def _record(self, line: bytes) -> None:
        seconds, status = line.split()
        self.latencies.append(float(seconds))
        self.failures += 0 if int(status) == 200 else 1

    async def _read(self) -> None:
        assert self._child is not None and self._child.stdout is not None
        async for line in self._child.stdout:
            self._record(line)

    async def stop(self) -> None:
        if self._child is not None and self._child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._child.terminate()
            await self._child.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._child = self._reader = None

    def figures(self) -> dict[str, Any]:
        ms = [1000 * x for x in self.latencies]
        return {
            "readyz_probes": len(ms),
            "readyz_failures": self.failures,
            "readyz_p50_ms": round(percentile(ms, 50), 3),
            "readyz_p99_ms": round(percentile(ms, 99), 3),
            "readyz_max_ms": round(max(ms, default=0.0), 3),
        }


async def probe(url: str, ca_file: str, interval: float) -> None:
    """Probe until terminated, one line per answer (or failure) on stdout."""
    context = ssl.create_default_context(cafile=ca_file)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
    connector = aiohttp.TCPConnector(ssl=context, limit=1)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        while True:
            started = time.perf_counter()
            try:
                async with session.get(url) as response:
                    await response.read()
                    status = response.status
            except (aiohttp.ClientError, TimeoutError):
                status = 0
            print(f"{time.perf_counter() - started:.6f} {status}", flush=True)
            await asyncio.sleep(interval)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m draplane.bench.readyz")
    parser.add_argument("url")
    parser.add_argument("--ca", required=True)
    parser.add_argument("--interval", type=float, default=READYZ_INTERVAL)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        eventloop.run(probe(args.url, args.ca, args.interval))


if __name__ == "__main__":
    main()
