"""Field and label selectors over HTTPS on every served kind: `=`, `==`, `!=` on metadata.name
and metadata.namespace, the kind-specific fields kubectl and kubelets use, every label operator,
and 400 `field label not supported` for anything else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.request import resource_path
from draplane.testing.apiobjects import ObjectSeeder
from draplane.testing.builders import (
    make_claim,
    make_class,
    make_node,
    make_pod,
    make_scheduling_context,
    make_template,
)
from draplane.testing.httpserver import HttpServer

OTHER_NS = "team"


def _plain(kind: str, api_version: str, **fields: Any) -> Callable[[str, str], Obj]:
    def make(name: str, namespace: str) -> Obj:
        md = {"name": name, "namespace": namespace}
        return {"apiVersion": api_version, "kind": kind, "metadata": md, **fields}

    return make


def _event(name: str, namespace: str) -> Obj:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"kind": "Pod", "name": f"pod-{name}", "namespace": namespace},
        "reason": "Started" if name == "a" else "Failed",
        "type": "Normal" if name == "a" else "Warning",
        "source": {"component": "kubelet" if name == "a" else "scheduler"},
        "reportingComponent": "kubelet" if name == "a" else "",
        "message": "m",
    }


MAKERS: dict[ResourceType, Callable[[str, str], Obj]] = {
    kinds.NAMESPACES: lambda name, _: {"metadata": {"name": f"ns-{name}"}},
    kinds.PODS: lambda name, ns: make_pod(name, ns).obj(),
    kinds.NODES: lambda name, _: make_node(name).obj(),
    kinds.EVENTS: _event,
    kinds.CONFIGMAPS: _plain("ConfigMap", "v1"),
    kinds.LEASES: _plain("Lease", "coordination.k8s.io/v1", spec={}),
    kinds.RESOURCE_CLASSES: lambda name, _: make_class(name).obj(),
    kinds.RESOURCE_CLAIMS: lambda name, ns: make_claim(name, ns).obj(),
    kinds.RESOURCE_CLAIM_TEMPLATES: lambda name, ns: make_template(name, ns).obj(),
    kinds.POD_SCHEDULING_CONTEXTS: lambda name, ns: make_scheduling_context(
        make_pod(name, ns).obj()
    ).obj(),
}


@pytest.fixture
async def server(server: HttpServer) -> HttpServer:
    await server.client().create(kinds.NAMESPACES, {"metadata": {"name": OTHER_NS}})
    return server


async def _seed(server: HttpServer, rt: ResourceType) -> None:
    seeder = ObjectSeeder(server.client())
    for name, ns in (("a", "default"), ("b", "default"), ("c", OTHER_NS)):
        await seeder.create(rt, MAKERS[rt](name, ns))


async def _list(http: aiohttp.ClientSession, rt: ResourceType, **params: str) -> tuple[int, Any]:
    async with http.get(resource_path(rt), params=params) as resp:
        return resp.status, orjson.loads(await resp.read())


def _names(body: Any, rt: ResourceType) -> list[str]:
    names = [o["metadata"]["name"] for o in body["items"]]
    if rt is kinds.NAMESPACES:
        return [n.removeprefix("ns-") for n in names if n.startswith("ns-")]
    return names


@pytest.mark.parametrize("rt", list(MAKERS), ids=[rt.resource for rt in MAKERS])
async def test_name_and_namespace_selectors_on_every_kind(
    server: HttpServer, http: aiohttp.ClientSession, rt: ResourceType
) -> None:
    await _seed(server, rt)
    prefix = "ns-" if rt is kinds.NAMESPACES else ""

    results = {
        op: _names((await _list(http, rt, fieldSelector=f"metadata.name{op}{prefix}a"))[1], rt)
        for op in ("=", "==", "!=")
    }
    _, in_default = await _list(http, rt, fieldSelector="metadata.namespace=default")
    _, not_default = await _list(http, rt, fieldSelector="metadata.namespace!=default")

    assert results["="] == results["=="] == ["a"]
    assert sorted(results["!="]) == ["b", "c"]
    if rt.namespaced:
        assert _names(in_default, rt) == ["a", "b"]
        assert _names(not_default, rt) == ["c"]


async def _seed_pods(server: HttpServer) -> None:
    seeder = ObjectSeeder(server.client())
    await seeder.create(kinds.PODS, make_pod("run").node("n1").phase("Running").obj())
    await seeder.create(kinds.PODS, make_pod("done").node("n1").phase("Succeeded").obj())
    await seeder.create(kinds.PODS, make_pod("wait").phase("Pending").obj())


@pytest.mark.parametrize(
    ("rt", "selector", "want"),
    [
        pytest.param(kinds.PODS, "spec.nodeName=n1", ["done", "run"], id="pods-node"),
        pytest.param(kinds.PODS, "spec.nodeName==", ["wait"], id="pods-unscheduled"),
        pytest.param(
            kinds.PODS,
            "spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed",
            ["run"],
            id="pods-describe-node",
        ),
        pytest.param(kinds.PODS, "status.phase=Pending", ["wait"], id="pods-phase"),
        pytest.param(
            kinds.PODS,
            "spec.schedulerName=default-scheduler",
            ["done", "run", "wait"],
            id="pods-sched",
        ),
        pytest.param(kinds.PODS, "spec.restartPolicy!=Always", [], id="pods-restart-policy"),
        pytest.param(kinds.EVENTS, "involvedObject.name=pod-a", ["a"], id="events-name"),
        pytest.param(
            kinds.EVENTS,
            "involvedObject.kind=Pod,involvedObject.namespace=team",
            ["c"],
            id="events-object",
        ),
        pytest.param(kinds.EVENTS, "reason!=Started", ["b", "c"], id="events-reason"),
        pytest.param(kinds.EVENTS, "type==Warning", ["b", "c"], id="events-type"),
        pytest.param(kinds.EVENTS, "source=kubelet", ["a"], id="events-source"),
        pytest.param(kinds.EVENTS, "reportingComponent=kubelet", ["a"], id="events-reporting"),
        pytest.param(kinds.NAMESPACES, "status.phase=Active", ["a", "b", "c"], id="namespaces"),
        pytest.param(kinds.NODES, "spec.unschedulable=false", ["a", "b", "c"], id="nodes"),
    ],
)
async def test_kind_specific_field_selectors(
    server: HttpServer,
    http: aiohttp.ClientSession,
    rt: ResourceType,
    selector: str,
    want: list[str],
) -> None:
    if rt is kinds.PODS:
        await _seed_pods(server)
    else:
        await _seed(server, rt)

    code, body = await _list(http, rt, fieldSelector=selector)

    assert code == 200
    assert sorted(_names(body, rt)) == want


@pytest.mark.parametrize(
    ("rt", "field"),
    [
        pytest.param(kinds.RESOURCE_CLAIMS, "spec.resourceClassName", id="claims"),
        pytest.param(kinds.CONFIGMAPS, "spec.nodeName", id="configmaps"),
        pytest.param(kinds.PODS, "spec.containers", id="pods"),
        pytest.param(kinds.EVENTS, "message", id="events"),
    ],
)
async def test_unsupported_field_is_400(
    http: aiohttp.ClientSession, rt: ResourceType, field: str
) -> None:
    code, body = await _list(http, rt, fieldSelector=f"{field}=x")

    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == f"field label not supported: {field}"


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param("tier=gpu", ["a", "c"], id="equals"),
        pytest.param("tier==gpu", ["a", "c"], id="double-equals"),
        pytest.param("tier!=gpu", ["b", "d"], id="not-equals-matches-missing"),
        pytest.param("tier in (gpu,fpga)", ["a", "b", "c"], id="in"),
        pytest.param("tier notin (gpu)", ["b", "d"], id="notin-matches-missing"),
        pytest.param("size", ["a", "b"], id="exists"),
        pytest.param("!size", ["c", "d"], id="does-not-exist"),
        pytest.param("size>3", ["b"], id="greater-than"),
        pytest.param("size<3", ["a"], id="less-than"),
        pytest.param("tier=gpu,size", ["a"], id="and"),
    ],
)
async def test_label_selector_operators(
    server: HttpServer, http: aiohttp.ClientSession, selector: str, want: list[str]
) -> None:
    labels = {
        "a": {"tier": "gpu", "size": "2"},
        "b": {"tier": "fpga", "size": "8"},
        "c": {"tier": "gpu"},
        "d": {},
    }
    for name, claim_labels in labels.items():
        builder = make_claim(name)
        for key, value in claim_labels.items():
            builder.label(key, value)
        await server.client().create(kinds.RESOURCE_CLAIMS, builder.obj())

    code, body = await _list(http, kinds.RESOURCE_CLAIMS, labelSelector=selector)

    assert code == 200
    assert _names(body, kinds.RESOURCE_CLAIMS) == want


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param("tier in (gpu", id="unclosed-set"),
        pytest.param("size>x", id="non-integer-comparison"),
        pytest.param("Bad Key=1", id="bad-key"),
    ],
)
async def test_bad_label_selector_is_400(http: aiohttp.ClientSession, selector: str) -> None:
    code, body = await _list(http, kinds.RESOURCE_CLAIMS, labelSelector=selector)

    assert (code, body["reason"]) == (400, "BadRequest")
