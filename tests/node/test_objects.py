"""The addresses simulated nodes hand out: every node's pod CIDR and pod IPs are valid and
distinct at the sizes the scale benchmarks run (5,000 nodes), and the API server accepts them."""

from __future__ import annotations

import ipaddress

import pytest

from draplane.api import kinds, meta
from draplane.node import _objects
from draplane.testing.builders import make_pod

from .conftest import Env

INDEXES = [0, 255, 256, 3071, 3072, 4999, 65535]


@pytest.mark.parametrize("index", INDEXES, ids=[f"node-{i}" for i in INDEXES])
def test_pod_ips_lie_in_the_nodes_pod_cidr(index: int) -> None:
    cidr = ipaddress.ip_network(_objects.pod_cidr(index))
    assert cidr.prefixlen == 24
    assert [str(ipaddress.ip_address(_objects.pod_ip(index, s))) for s in (1, 253)] == [
        _objects.pod_ip(index, 1),
        _objects.pod_ip(index, 253),
    ]
    assert all(ipaddress.ip_address(_objects.pod_ip(index, s)) in cidr for s in range(300))


def test_pod_cidrs_are_distinct_for_65536_nodes() -> None:
    assert len({_objects.pod_cidr(i) for i in range(65536)}) == 65536


@pytest.mark.parametrize("index", [3072, 4999], ids=["node-3072", "node-4999"])
async def test_api_accepts_a_started_pod_of_a_high_node_index(env: Env, index: int) -> None:
    pod = await env.admin.create(kinds.PODS, make_pod(f"p-{index}").obj(), "default")
    node = _objects.node_object(f"node-{index}", index=index, now="2026-12-01T00:00:00Z")
    await env.admin.create(kinds.NODES, node)
    await env.bind(pod, f"node-{index}")
    pod = await env.pod(f"p-{index}")
    pod["status"] = {"phase": "Running", "podIP": _objects.pod_ip(index, 1)}
    pod["status"]["podIPs"] = [{"ip": pod["status"]["podIP"]}]
    await env.admin.update(kinds.PODS, pod, subresource="status")
    stored = await env.pod(f"p-{index}")
    assert stored["status"]["podIPs"] == [{"ip": _objects.pod_ip(index, 1)}]
    stored_node = await env.admin.get(kinds.NODES, meta.name(node))
    assert stored_node["spec"]["podCIDR"] == _objects.pod_cidr(index)
