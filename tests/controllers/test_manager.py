"""ControllerManager: all three controllers together, the claim controller as its own user."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry

from draplane.api import meta, versions
from draplane.api.auth import controller_user
from draplane.api.errors import StatusError
from draplane.api.kinds import NAMESPACES, PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_CLAIMS
from draplane.controllers.manager import ControllerManager
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod, make_template


async def test_manager_creates_claims_and_collects_them(cluster) -> None:
    admin = cluster.client()
    metrics = CollectorRegistry()
    manager = ControllerManager(
        admin,
        client_for=lambda name: cluster.client(controller_user(name)),
        metrics=metrics,
        mode=versions.CLASSIC,
    )
    running = asyncio.create_task(manager.run())
    try:
        await admin.create(RESOURCE_CLAIM_TEMPLATES, make_template("t").obj(), "default")
        await admin.create(PODS, make_pod("p").claim_template("gpu", "t").obj(), "default")

        async def recorded() -> bool:
            pod = await admin.get(PODS, "p", "default")
            return bool((pod.get("status") or {}).get("resourceClaimStatuses"))

        await wait_for(recorded)
        assert manager.has_synced()
        pod = await admin.get(PODS, "p", "default")
        claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
        assert claim_name.startswith("p-gpu-")
        claim = await admin.get(RESOURCE_CLAIMS, claim_name, "default")
        assert meta.controller_ref(claim)["uid"] == meta.uid(pod)
        assert metrics.get_sample_value("resourceclaim_controller_create_attempts_total") == 1
        assert metrics.get_sample_value("workqueue_adds_total", {"name": "resource_claim"})

        await admin.delete(PODS, "p", "default")

        async def collected() -> bool:
            return not (await admin.list(RESOURCE_CLAIMS, "default"))["items"]

        await wait_for(collected)

        await admin.create(
            NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}}
        )
        await admin.create(RESOURCE_CLAIM_TEMPLATES, make_template("t", "gone").obj(), "gone")
        await admin.delete(NAMESPACES, "gone")

        async def namespace_gone() -> bool:
            try:
                await admin.get(NAMESPACES, "gone")
            except StatusError as err:
                return err.code == 404
            return False

        await wait_for(namespace_gone)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
