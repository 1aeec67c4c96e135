"""Fault injection: claim creates and pod status writes fail at random (before or after the
write reaches the server) and the controller restarts at random points, over many pods.
Afterwards every pod claim has exactly one claim, named in the pod status, and nothing is left
once the pods are deleted and the garbage collector ran."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from prometheus_client import CollectorRegistry

from draplane.api import meta, versions
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.errors import internal
from draplane.api.kinds import PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_CLAIMS
from draplane.api.request import Request
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client, Transport
from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.controllers.context import ControllerContext
from draplane.controllers.garbagecollector import GarbageCollector
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.dra.claims import ANNOTATION_POD_CLAIM_NAME
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod, make_template

PODS_COUNT = 200
FAILURE_RATE = 0.3


class FlakyTransport:
    """Wraps a client's transport: claim creates and pod status patches fail with a 500 at
    random, half of them after the server already did the write (a lost response)."""

    def __init__(self, inner: Transport, rng: random.Random, rate: float) -> None:
        self._inner = inner
        self._rng = rng
        self._rate = rate
        self.injected = Counter[str]()
        self.calls_left: int | None = None
        self.exhausted = asyncio.Event()

    def restart_after(self, calls: int | None) -> None:
        """Set `exhausted` after that many more writes (None: never)."""
        self.calls_left = calls
        self.exhausted.clear()

    @property
    def user(self) -> str:
        return self._inner.user

    async def send(self, request: Request) -> Any:
        if request.verb == "create" and request.rt is RESOURCE_CLAIMS:
            what = "create"
        elif request.verb == "patch" and request.rt is PODS and request.subresource == "status":
            what = "status"
        else:
            return await self._inner.send(request)
        if self.calls_left is not None:
            self.calls_left -= 1
            if self.calls_left <= 0:
                self.exhausted.set()
        roll = self._rng.random()
        if roll < self._rate / 2:
            self.injected[f"{what} before"] += 1
            raise internal(f"injected {what} failure before the write")
        result = await self._inner.send(request)
        if roll < self._rate:
            self.injected[f"{what} after"] += 1
            raise internal(f"injected {what} failure after the write")
        return result

    async def close(self) -> None:
        await self._inner.close()


async def _all_recorded(client: Client) -> bool:
    pods = (await client.list(PODS, "default"))["items"]
    claims = {meta.name(c) for c in (await client.list(RESOURCE_CLAIMS, "default"))["items"]}
    for pod in pods:
        recorded = {
            e["name"]: e.get("resourceClaimName")
            for e in (pod.get("status") or {}).get("resourceClaimStatuses") or []
        }
        for pod_claim in pod["spec"]["resourceClaims"]:
            if recorded.get(pod_claim["name"]) not in claims:
                return False
    return True


async def _run_for(
    flaky: FlakyTransport, informers_client: Client, metrics: CollectorRegistry, admin: Client
) -> None:
    """One controller lifetime, with fresh informers and caches, until the client has made
    its budget of writes (the cancellation lands wherever the controller is then) or, without
    a budget, until every pod claim is recorded."""
    factory = InformerFactory(informers_client)
    controller = ResourceClaimController(
        ControllerContext.of(
            Client(flaky),
            factory,
            metrics=metrics,
            rate_limiter=ItemExponentialFailureRateLimiter(base=0.001, cap=0.02),
        ),
        mode=versions.CLASSIC,
    )
    await factory.start()
    running = asyncio.create_task(controller.run())

    async def finished() -> bool:
        return flaky.exhausted.is_set() or await _all_recorded(admin)

    try:
        await wait_for(finished, timeout=20, what="faults exhausted or claims recorded")
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await factory.stop()


async def test_faults_and_restarts_never_duplicate_or_orphan_claims(cluster) -> None:
    rng = random.Random(20260101)
    admin = cluster.client()
    await admin.create(RESOURCE_CLAIM_TEMPLATES, make_template("template").obj(), "default")
    for i in range(PODS_COUNT):
        pod = make_pod(f"pod-{i}").claim_template("a", "template")
        if i % 3 == 0:  # every third pod has a second claim
            pod.claim_template("b", "template")
        await admin.create(PODS, pod.obj(), "default")
    writer = cluster.client(controller_user("resource-claim-controller"))
    flaky = FlakyTransport(writer.transport, rng, FAILURE_RATE)
    informers_client = cluster.client(UserInfo(CONTROLLER_MANAGER))
    metrics = CollectorRegistry()

    restarts = 0
    while not await _all_recorded(admin):
        # Restarts at random points first; the last lifetime is long enough to finish.
        flaky.restart_after(rng.randint(1, 30) if restarts < 30 else None)
        await _run_for(flaky, informers_client, metrics, admin)
        restarts += 1
        assert restarts < 40, "the controller did not converge"

    assert flaky.injected["create before"] and flaky.injected["create after"]
    assert flaky.injected["status before"] and flaky.injected["status after"]
    assert restarts > 1
    assert metrics.get_sample_value("resourceclaim_controller_create_failures_total")

    pods = (await admin.list(PODS, "default"))["items"]
    claims = (await admin.list(RESOURCE_CLAIMS, "default"))["items"]
    owned: dict[tuple[str, str], list[str]] = {}
    for claim in claims:
        ref = meta.controller_ref(claim)
        assert ref is not None
        key = (ref["uid"], meta.annotations(claim)[ANNOTATION_POD_CLAIM_NAME])
        owned.setdefault(key, []).append(meta.name(claim))
    expected_claims = 0
    for pod in pods:
        recorded = {
            e["name"]: e["resourceClaimName"] for e in pod["status"]["resourceClaimStatuses"]
        }
        for pod_claim in pod["spec"]["resourceClaims"]:
            expected_claims += 1
            assert owned[(meta.uid(pod), pod_claim["name"])] == [recorded[pod_claim["name"]]]
    assert len(claims) == expected_claims

    # Once the pods are gone, the garbage collector leaves nothing behind.
    factory = InformerFactory(admin)
    collector = GarbageCollector(ControllerContext.of(admin, factory))
    await factory.start()
    running = asyncio.create_task(collector.run())
    try:
        for pod in pods:
            await admin.delete(PODS, meta.name(pod), "default")

        async def drained() -> bool:
            return not (await admin.list(RESOURCE_CLAIMS, "default"))["items"]

        await wait_for(drained, timeout=20, what="claims collected")
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await factory.stop()
