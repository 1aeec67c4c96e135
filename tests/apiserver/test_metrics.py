"""The API server's /metrics as kube-apiserver names and labels them: apiserver_request_total
and apiserver_request_duration_seconds by verb, dry run, group, version, resource,
subresource, scope and component; apiserver_current_inflight_requests by request kind;
apiserver_storage_objects by resource."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from draplane.api import kinds
from draplane.testing.builders import make_pod
from draplane.testing.httpserver import HttpServer

Labels = dict[str, str]


@pytest.fixture
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with server.session() as session:
        yield session


async def _samples(http: aiohttp.ClientSession, name: str) -> list[tuple[Labels, float]]:
    async with http.get("/metrics") as resp:
        assert resp.status == 200
        text = await resp.text()
    return [
        (dict(sample.labels), sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    ]


def _labels(verb: str, resource: str, scope: str, **kw: str) -> Labels:
    return {
        "verb": verb,
        "dry_run": kw.get("dry_run", ""),
        "group": kw.get("group", ""),
        "version": kw.get("version", "v1"),
        "resource": resource,
        "subresource": kw.get("subresource", ""),
        "scope": scope,
        "component": "apiserver",
    }


POD = orjson.dumps(make_pod("m").obj() | {"apiVersion": "v1", "kind": "Pod"})
APPLY = orjson.dumps(
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1"}}
)

JSON = {"Content-Type": "application/json"}
CASES = [
    pytest.param(
        "GET", "/api/v1/pods", {}, None, "LIST", "pods", "cluster", {}, "200", id="list-cluster"
    ),
    pytest.param(
        "GET", "/api/v1/namespaces/default/pods", {}, None, "LIST", "pods", "namespace", {}, "200",
        id="list-namespace",
    ),
    pytest.param(
        "GET", "/api/v1/namespaces/default/pods/none", {}, None, "GET", "pods", "resource", {},
        "404", id="get-missing",
    ),
    pytest.param(
        "POST", "/api/v1/namespaces/default/pods?dryRun=All", JSON, POD, "POST", "pods",
        "namespace", {"dry_run": "All"}, "201", id="dry-run-create",
    ),
    pytest.param(
        "PATCH", "/api/v1/namespaces/default/configmaps/applied?fieldManager=t",
        {"Content-Type": "application/apply-patch+yaml"}, APPLY, "APPLY", "configmaps", "resource",
        {}, None, id="server-side-apply",
    ),
    pytest.param(
        "GET", "/apis/apps/v1/namespaces/default/deployments/none/scale", {}, None, "GET",
        "deployments", "resource", {"group": "apps", "subresource": "scale"}, "404",
        id="subresource-of-a-group",
    ),
    pytest.param(
        "DELETE", "/api/v1/namespaces/default/configmaps", {}, None, "DELETECOLLECTION",
        "configmaps", "namespace", {}, "200", id="deletecollection",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "verb", "resource", "scope", "extra", "code"), CASES
)
async def test_request_total_and_duration_labels(
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None,
    verb: str,
    resource: str,
    scope: str,
    extra: dict[str, str],
    code: str | None,
) -> None:
    async with http.request(method, path, headers=headers, data=body) as resp:
        sent = str(resp.status)
        await resp.read()

    totals = await _samples(http, "apiserver_request_total")
    counts = await _samples(http, "apiserver_request_duration_seconds_count")

    labels = _labels(verb, resource, scope, **extra)
    assert sent == code or (code is None and sent.startswith("2"))
    assert (labels | {"code": sent}, 1.0) in totals
    assert (labels, 1.0) in counts


async def test_a_watch_is_counted_not_timed_and_not_in_flight(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    async with http.get("/api/v1/pods?watch=true&timeoutSeconds=1") as resp:
        assert resp.status == 200
        inflight = dict(
            (labels["request_kind"], value)
            for labels, value in await _samples(http, "apiserver_current_inflight_requests")
        )
        await resp.read()
    totals = await _samples(http, "apiserver_request_total")
    counts = await _samples(http, "apiserver_request_duration_seconds_count")
    watch = _labels("WATCH", "pods", "cluster")

    # The /metrics request itself is the one read in flight.
    assert inflight == {"readOnly": 1.0, "mutating": 0.0}
    assert (watch | {"code": "200"}, 1.0) in totals
    assert not [labels for labels, _ in counts if labels == watch]


async def test_non_resource_requests_have_empty_resource_labels(
    http: aiohttp.ClientSession,
) -> None:
    async with http.get("/version") as resp:
        assert resp.status == 200

    totals = await _samples(http, "apiserver_request_total")

    expected = {
        "verb": "GET", "dry_run": "", "group": "", "version": "", "resource": "",
        "subresource": "", "scope": "", "component": "apiserver", "code": "200",
    }  # fmt: skip
    assert (expected, 1.0) in totals


async def test_storage_objects_per_resource(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    client = server.client()
    for name in ("a", "b", "c"):
        await client.create(kinds.PODS, make_pod(name).obj(), "default")
    assert server.server.object_counts is not None
    await server.server.object_counts.poll()

    counts: dict[str, Any] = {
        labels["resource"]: value
        for labels, value in await _samples(http, "apiserver_storage_objects")
    }

    assert counts["pods"] == 3.0
    assert counts["namespaces"] >= 4.0  # default, kube-system, kube-public, kube-node-lease
    assert counts["deployments.apps"] == 0.0
    assert "clusterroles.rbac.authorization.k8s.io" in counts
