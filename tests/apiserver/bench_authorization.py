"""Benchmark (not a test): the CPU authorization adds to a request.

    .venv/bin/python tests/apiserver/bench_authorization.py [--creates 3000] [--rounds 3]

Creates ConfigMaps through `Registry.handle` (LocalClient, MemoryStorage) as a user bound to the
aggregated `edit` role in the namespace (the RBAC path), as `system:masters`, and with the
authorizer replaced by AlwaysAllow; prints CPU per create and the CPU of one `authorize()` call
for the same request, the median of the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from draplane.api import kinds
from draplane.api.auth import UserInfo
from draplane.api.request import Request
from draplane.apiserver.authorization import AlwaysAllow
from draplane.apiserver.registry import attributes
from draplane.testing.cluster import start_cluster

RBAC = "rbac.authorization.k8s.io"
ALICE = UserInfo("alice", "", ("system:authenticated",))
ADMIN = UserInfo("admin", "", ("system:masters", "system:authenticated"))


async def measure(user: UserInfo, *, authorize: bool, creates: int) -> tuple[float, float]:
    cluster = await start_cluster()
    try:
        binding = {
            "apiVersion": f"{RBAC}/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "alice-edit", "namespace": "default"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "alice"}],
        }
        await cluster.client().create(kinds.ROLE_BINDINGS, binding)
        await cluster.registry.watch_cache.wait_until_fresh(cluster.storage.revision, 5)
        if not authorize:
            cluster.registry.authorizer = AlwaysAllow()
        client = cluster.client(user)
        for i in range(200):
            await client.create(kinds.CONFIGMAPS, {"metadata": {"name": f"w{i}"}}, "default")
        cpu = time.process_time()
        for i in range(creates):
            await client.create(kinds.CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
        per_create = (time.process_time() - cpu) / creates * 1e6
        attrs = attributes(user, Request("create", kinds.CONFIGMAPS, "default", body={}))
        cpu = time.process_time()
        for _ in range(creates):
            cluster.registry.authorizer.authorize(attrs)
        per_authorize = (time.process_time() - cpu) / creates * 1e6
        return per_create, per_authorize
    finally:
        await cluster.stop()


async def run(creates: int, rounds: int) -> None:
    cases = [
        ("AlwaysAllow", ALICE, False),
        ("RBAC (edit through a RoleBinding)", ALICE, True),
        ("system:masters", ADMIN, True),
    ]
    results: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in cases}
    for _ in range(rounds):
        for name, user, authorize in cases:
            results[name].append(await measure(user, authorize=authorize, creates=creates))
    for name, samples in results.items():
        create = statistics.median(s[0] for s in samples)
        alone = statistics.median(s[1] for s in samples)
        print(f"{name:36s} {create:7.1f} us CPU per create   authorize() {alone:5.2f} us")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--creates", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(run(args.creates, args.rounds))


if __name__ == "__main__":
    main()
