"""5,000 nodes read as a few lines: `explain_snapshot` over an in-memory snapshot (built with
the structured builders, as the API would list it) groups nodes whose reasons read the same."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from draplane.api import versions
from draplane.api.kinds import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.client.interface import Client
from draplane.explain import Snapshot, Verdict, explain_snapshot, render
from draplane.testing.builders import make_node, make_pod
from draplane.testing.cluster import start_cluster
from draplane.testing.structured import (
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
)

DRIVER = "driver.example.com"


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    cluster = await start_cluster(mode=versions.STRUCTURED)
    yield cluster.client()
    await cluster.stop()


def _fleet(nodes: int, tainted: int) -> Snapshot:
    node_objs, slices = [], []
    for i in range(nodes):
        name = f"node-{i:04}"
        node = make_node(name)
        if i < tainted:
            node.taint("reserved", "NoSchedule")
        node_objs.append(node.obj())
        devices = [make_device(f"gpu-{d}").attr("model", "a100") for d in range(2)]
        slices.append(make_resource_slice(name, DRIVER, name).node(name).device(*devices).obj())
    claim = make_structured_claim("c").request("gpu", "gpu", count=4).obj()
    pod = make_pod("p").claim_ref("gpu", "c", mode=versions.STRUCTURED).obj()
    return Snapshot.of(
        {
            NODES: node_objs,
            RESOURCE_SLICES: slices,
            DEVICE_CLASSES: [make_device_class("gpu", DRIVER).obj()],
            RESOURCE_CLAIMS_V1: [claim],
            PODS: [pod],
        }
    )


async def test_five_thousand_nodes_read_as_a_few_lines(client: Client) -> None:
    snapshot = _fleet(5000, tainted=7)
    pod = snapshot.get(PODS, "p", "default")
    assert pod is not None
    report = explain_snapshot(client, snapshot, pod)
    assert [len(g.nodes) for g in report.groups] == [4993, 7]
    assert report.groups[0].reasons[0].summary == "wanted 4, free 2"
    assert [x.plugin for x in report.groups[1].reasons] == ["TaintToleration", "DynamicResources"]
    text = render(report, "text")
    assert len(text.splitlines()) < 20, text
    assert (
        "4993 nodes (node-0007, node-0008, node-0009, node-0010, node-0011 and 4988 more)" in text
    )
    assert report.verdict is Verdict.UNSCHEDULABLE_WITH_FIX
    assert report.fixes[0].summary == "lower the count of claim default/c request gpu to 2"
