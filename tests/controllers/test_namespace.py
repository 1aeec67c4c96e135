"""Namespace controller: a deleted namespace is emptied, then finalized and removed."""

from __future__ import annotations

import asyncio

from draplane.api import meta
from draplane.api.errors import StatusError
from draplane.api.kinds import CONFIGMAPS, NAMESPACES, PODS, RESOURCE_CLAIMS
from draplane.client.informer import InformerFactory
from draplane.controllers.context import ControllerContext
from draplane.controllers.namespace import NamespaceController
from draplane.controllers.objectkey import ObjectKey
from draplane.testing.builders import make_claim, make_pod


async def test_namespace_is_emptied_then_finalized(cluster, seed) -> None:
    admin = cluster.client()
    await admin.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}
    )
    await seed(
        make_pod("p", "doomed").obj(),
        make_claim("c", "doomed").obj(),
        make_claim("held", "doomed").finalizer("test/keep").obj(),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "doomed"},
        },
        make_claim("c", "default").obj(),
    )
    await admin.delete(NAMESPACES, "doomed")
    factory = InformerFactory(admin)
    controller = NamespaceController(ControllerContext.of(admin, factory))
    await factory.start()
    try:
        await asyncio.wait_for(factory.wait_synced(), 5)
        key = ObjectKey("Namespace", "", "doomed")
        assert await controller.sync(key) is False
        assert (await admin.list(PODS, "doomed"))["items"] == []
        assert (await admin.list(CONFIGMAPS, "doomed"))["items"] == []
        claims = (await admin.list(RESOURCE_CLAIMS, "doomed"))["items"]
        assert [meta.name(c) for c in claims] == ["held"]
        namespace = await admin.get(NAMESPACES, "doomed")
        assert namespace["spec"]["finalizers"] == ["kubernetes"]

        released = meta.deep_copy(claims[0])
        released["metadata"]["finalizers"] = []
        await admin.update(RESOURCE_CLAIMS, released)
        assert await controller.sync(key) is True
        try:
            await admin.get(NAMESPACES, "doomed")
            gone = False
        except StatusError as err:
            gone = err.code == 404
        assert gone
        # Other namespaces are untouched.
        assert len((await admin.list(RESOURCE_CLAIMS, "default"))["items"]) == 1
    finally:
        await factory.stop()


async def test_live_namespace_is_left_alone(cluster) -> None:
    admin = cluster.client()
    factory = InformerFactory(admin)
    controller = NamespaceController(ControllerContext.of(admin, factory))
    await factory.start()
    try:
        await asyncio.wait_for(factory.wait_synced(), 5)
        assert await controller.sync(ObjectKey("Namespace", "", "default")) is True
        assert await admin.get(NAMESPACES, "default")
        assert len(controller.queue) == 0
    finally:
        await factory.stop()
