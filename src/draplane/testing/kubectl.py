"""Running the real, versioned kubectl binaries from tests (as subprocesses, so the API server in
the test's event loop keeps serving), each with its own discovery cache."""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

SDK_BIN = Path("/usr/lib/google-cloud-sdk/bin")
VERSIONS = ("1.27", "1.29", "1.32", "1.33")


def kubectl_binary(version: str) -> str | None:
    """The path of `kubectl.<version>`, or None when the machine does not have it."""
    candidate = SDK_BIN / f"kubectl.{version}"
    if candidate.exists():
        return str(candidate)
    return shutil.which(f"kubectl.{version}")


@dataclass
class Kubectl:
    binary: str
    version: str
    kubeconfig: Path
    cache_dir: Path
    timeout: float = 30.0

    def _command(self, args: tuple[str, ...]) -> list[str]:
        return [self.binary, "--kubeconfig", str(self.kubeconfig), *args]

    def _env(self) -> dict[str, str]:
        return {**os.environ, "KUBECACHEDIR": str(self.cache_dir), "HOME": str(self.cache_dir)}

    async def run(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """stdout (plus stderr when check=False); raises AssertionError on failure if check."""
        proc = await asyncio.create_subprocess_exec(
            *self._command(args),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._env(),
        )
        out, err = await asyncio.wait_for(
            proc.communicate(stdin.encode() if stdin is not None else None), timeout=self.timeout
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}): {err.decode()}"
            )
        return out.decode() + ("" if check else err.decode())

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *self._command(args),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._env(),
        )
