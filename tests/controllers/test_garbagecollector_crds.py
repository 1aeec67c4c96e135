"""Garbage collector and namespace controller with custom resources: a custom resource whose
owner is gone is deleted, a built-in dependent of a deleted custom resource is deleted, and
deleting a namespace deletes the custom resources in it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from draplane.api import crd, kinds, meta
from draplane.api.errors import StatusError
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.controllers.context import ControllerContext
from draplane.controllers.garbagecollector import GarbageCollector
from draplane.controllers.namespace import NamespaceController
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_claim
from draplane.testing.cluster import Cluster
from draplane.testing.crds import make_crd, make_widget


async def _gone(client: Client, rt: kinds.ResourceType, name: str, namespace: str) -> bool:
    try:
        await client.get(rt, name, namespace)
    except StatusError as err:
        return err.code == 404
    return False


@pytest.fixture
async def controllers(cluster: Cluster) -> AsyncIterator[Client]:
    client = cluster.client()
    await client.create(kinds.CUSTOM_RESOURCE_DEFINITIONS, make_crd())
    factory = InformerFactory(client)
    collector = GarbageCollector(ControllerContext.of(client, factory))
    namespaces = NamespaceController(ControllerContext.of(client, factory))
    await factory.start()
    await asyncio.wait_for(factory.wait_synced(), 5)
    tasks = [asyncio.create_task(collector.run()), asyncio.create_task(namespaces.run())]
    yield client
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await factory.stop()


async def test_custom_resources_as_dependents_and_owners(controllers: Client) -> None:
    client = controllers
    widgets = crd.resource_type(
        await client.get(kinds.CUSTOM_RESOURCE_DEFINITIONS, "widgets.example.com")
    )
    assert widgets is not None
    owner = await client.create(
        kinds.CONFIGMAPS,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "owner", "namespace": "default"},
        },
    )
    dependent = make_widget("dependent")
    dependent["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": meta.uid(owner)}
    ]
    await client.create(widgets, dependent)
    widget_owner = await client.create(widgets, make_widget("owner"))
    claim = make_claim("owned").owner(
        "Widget", "owner", meta.uid(widget_owner), api_version="example.com/v1"
    )
    await client.create(kinds.RESOURCE_CLAIMS, claim.obj())

    await client.delete(kinds.CONFIGMAPS, "owner", "default")
    await client.delete(widgets, "owner", "default")

    await wait_for(lambda: _gone(client, widgets, "dependent", "default"), what="widget collected")
    await wait_for(
        lambda: _gone(client, kinds.RESOURCE_CLAIMS, "owned", "default"), what="claim collected"
    )


async def test_namespace_deletion_deletes_its_custom_resources(controllers: Client) -> None:
    client = controllers
    widgets = crd.resource_type(
        await client.get(kinds.CUSTOM_RESOURCE_DEFINITIONS, "widgets.example.com")
    )
    assert widgets is not None
    await client.create(
        kinds.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    )
    await client.create(widgets, make_widget("w", "team"))

    await client.delete(kinds.NAMESPACES, "team")

    await wait_for(lambda: _gone(client, kinds.NAMESPACES, "team", ""), what="namespace gone")
    assert (await client.list(widgets))["items"] == []
