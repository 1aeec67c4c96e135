"""/healthz, /livez and /readyz: named checks, `?verbose`, `?exclude=`, `/<endpoint>/<check>`.

Output follows kube-apiserver: `ok` when every check passes; with `verbose` one
`[+]name ok` / `[-]name failed: reason withheld` line per check and a closing
`<endpoint> check passed|failed` line. A failing endpoint answers 500. A check fails by
returning False or raising; a StatusError's message (e.g. the store's disk is full) is logged
as the reason, without a traceback.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from draplane.api import errors

log = logging.getLogger(__name__)

CheckFn = Callable[[], bool | Awaitable[bool]]


async def _ping() -> bool:
    return True


class HealthChecks:
    """Checks per endpoint; `livez`/`healthz` share the liveness set, `readyz` adds to it."""

    def __init__(self) -> None:
        self._live: dict[str, CheckFn] = {"ping": _ping}
        self._ready: dict[str, CheckFn] = {}

    def add_ready_check(self, name: str, fn: CheckFn) -> None:
        self._ready[name] = fn

    def add_live_check(self, name: str, fn: CheckFn) -> None:
        self._live[name] = fn

    def checks_for(self, endpoint: str) -> dict[str, CheckFn]:
        if endpoint == "readyz":
            return {**self._live, **self._ready}
        return dict(self._live)

    async def run(self, endpoint: str, name: str) -> bool:
        fn = self.checks_for(endpoint)[name]
        try:
            result = fn()
            if inspect.isawaitable(result):
                result = await result
            return bool(result)
        except errors.StatusError as err:
            log.warning("%s check %s failed: %s", endpoint, name, err)
            return False
        except Exception:
            log.exception("health check %s/%s raised", endpoint, name)
            return False

    async def handle(self, request: web.Request) -> web.Response:
        endpoint = request.path.strip("/").split("/")[0]
        check = request.match_info.get("check", "")
        checks = self.checks_for(endpoint)
        if check:
            if check not in checks:
                return web.Response(status=404, text="404 page not found\n")
            ok = await self.run(endpoint, check)
            return web.Response(status=200 if ok else 500, text="ok" if ok else "failed")
        excluded = set(request.query.getall("exclude", []))
        lines: list[str] = []
        failed = False
        for name in checks:
            if name in excluded:
                lines.append(f"[+]{name} excluded: ok")
                continue
            ok = await self.run(endpoint, name)
            failed = failed or not ok
            lines.append(f"[+]{name} ok" if ok else f"[-]{name} failed: reason withheld")
        status = 500 if failed else 200
        if "verbose" in request.query or failed:
            verdict = "failed" if failed else "passed"
            return web.Response(
                status=status, text="\n".join([*lines, f"{endpoint} check {verdict}"]) + "\n"
            )
        return web.Response(status=status, text="ok")
