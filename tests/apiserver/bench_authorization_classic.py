"""Benchmark (not a test): the CPU authorization takes inside a scheduling workload.

    .venv/bin/python tests/apiserver/bench_authorization_classic.py [draplane bench arguments]

Runs `draplane bench` (default: `classic-template --scale full --hints on`) with
`Registry.authorize` wrapped by a thread-CPU timer, then prints how many requests were
authorized, their mean CPU, and the most expensive (user, verb, resource) groups.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from draplane.api.auth import UserInfo
from draplane.api.request import Request
from draplane.apiserver import registry
from draplane.cli.main import main as draplane

DEFAULT_ARGS = ["bench", "classic-template", "--scale", "full", "--hints", "on"]


def main() -> int:
    authorize = registry.Registry.authorize
    per: dict[tuple[str, str, str], list[float]] = {}

    async def timed(self: registry.Registry, user: UserInfo, request: Request) -> Any:
        start = time.thread_time()
        try:
            return await authorize(self, user, request)
        finally:
            key = (user.name, request.verb, request.rt.resource)
            per.setdefault(key, []).append(time.thread_time() - start)

    registry.Registry.authorize = timed  # type: ignore[method-assign]
    code = draplane(sys.argv[1:] or DEFAULT_ARGS)
    samples = [s for group in per.values() for s in group]
    mean = 1e6 * sum(samples) / max(1, len(samples))
    print(f"authorize calls {len(samples)}, CPU {sum(samples):.3f} s, {mean:.1f} us each")
    for (user, verb, resource), group in sorted(per.items(), key=lambda kv: -sum(kv[1]))[:8]:
        each = 1e6 * sum(group) / len(group)
        print(f"  {user} {verb} {resource}: {len(group)} calls, {each:.1f} us")
    return code


if __name__ == "__main__":
    sys.exit(main())
