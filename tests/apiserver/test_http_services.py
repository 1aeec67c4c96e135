"""Secrets, Services, Endpoints and EndpointSlices over HTTPS (one server for the module): the
`kubernetes` Service with its Endpoints and EndpointSlice, cluster IP and node port allocation
(lowest free, requested ones checked, no reuse while in use, kept on update, free again after
delete), Service defaults, headless Services, Secret `stringData`, base64 and typed-secret
rules, immutable Secrets, and what DELETE answers."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from draplane.testing.httpserver import HttpServer, start_http_server

pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "/api/v1/namespaces/default"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("services"))
    yield srv
    await srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with server.session() as session:
        yield session


async def _call(
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
) -> tuple[int, Any]:
    data = orjson.dumps(body) if body is not None else None
    async with http.request(
        method, path, data=data, headers={"Content-Type": content_type}
    ) as resp:
        return resp.status, orjson.loads(await resp.read())


def _service(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec},
    }


async def test_kubernetes_service_endpoints_and_slice(
    http: aiohttp.ClientSession, server: HttpServer
) -> None:
    _, service = await _call(http, "GET", f"{NS}/services/kubernetes")
    _, endpoints = await _call(http, "GET", f"{NS}/endpoints/kubernetes")
    _, slice_ = await _call(
        http, "GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
    )
    assert service["spec"]["clusterIP"] == "10.96.0.1"
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "protocol": "TCP", "targetPort": server.server.port}
    ]
    assert endpoints["subsets"] == [
        {
            "addresses": [{"ip": "127.0.0.1"}],
            "ports": [{"name": "https", "port": server.server.port, "protocol": "TCP"}],
        }
    ]
    assert slice_["endpoints"][0]["addresses"] == ["127.0.0.1"]
    assert slice_["ports"] == [{"name": "https", "port": server.server.port, "protocol": "TCP"}]


async def test_cluster_ip_allocation(http: aiohttp.ClientSession) -> None:
    _, a = await _call(http, "POST", f"{NS}/services", _service("a"))
    _, b = await _call(http, "POST", f"{NS}/services", _service("b"))
    taken_code, taken = await _call(
        http, "POST", f"{NS}/services", _service("c", clusterIP=a["spec"]["clusterIP"])
    )
    outside_code, outside = await _call(
        http, "POST", f"{NS}/services", _service("d", clusterIP="192.168.0.9")
    )
    _, put = await _call(
        http,
        "PUT",
        f"{NS}/services/a",
        {**a, "spec": {**a["spec"], "clusterIP": None, "clusterIPs": None}},
    )
    del_code, deleted = await _call(http, "DELETE", f"{NS}/services/a")
    _, again = await _call(
        http, "POST", f"{NS}/services", _service("e", clusterIP=a["spec"]["clusterIP"])
    )

    ip_a, ip_b = a["spec"]["clusterIP"], b["spec"]["clusterIP"]
    assert ip_a != ip_b and {ip_a, ip_b} <= {f"10.96.0.{i}" for i in range(2, 10)}
    assert a["spec"]["clusterIPs"] == [ip_a]
    assert (a["spec"]["ipFamilies"], a["spec"]["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert (taken_code, taken["details"]["causes"][0]["message"]) == (
        422,
        f'Invalid value: "{ip_a}": provided IP is already allocated',
    )
    assert (outside_code, outside["details"]["causes"][0]["message"]) == (
        422,
        'Invalid value: "192.168.0.9": provided IP is not in the valid range. '
        "The range of valid IPs is 10.96.0.0/12",
    )
    assert put["spec"]["clusterIP"] == ip_a  # an update leaving it out keeps it
    assert del_code == 200 and deleted["kind"] == "Service"  # DELETE returns the Service
    assert again["spec"]["clusterIP"] == ip_a  # free again once deleted


async def test_service_defaults_headless_and_node_ports(http: aiohttp.ClientSession) -> None:
    _, plain = await _call(http, "POST", f"{NS}/services", _service("plain"))
    _, headless = await _call(http, "POST", f"{NS}/services", _service("hl", clusterIP="None"))
    _, np1 = await _call(http, "POST", f"{NS}/services", _service("np1", type="NodePort"))
    np1_port = np1["spec"]["ports"][0]["nodePort"]
    taken_code, _ = await _call(
        http,
        "POST",
        f"{NS}/services",
        _service("np2", type="NodePort", ports=[{"port": 80, "nodePort": np1_port}]),
    )
    forbidden_code, forbidden = await _call(
        http, "POST", f"{NS}/services", _service("cip", ports=[{"port": 80, "nodePort": 30500}])
    )
    no_ports_code, no_ports = await _call(
        http, "POST", f"{NS}/services", _service("noports", ports=[])
    )

    assert plain["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert plain["spec"]["type"] == "ClusterIP"
    assert plain["spec"]["sessionAffinity"] == "None"
    assert plain["spec"]["internalTrafficPolicy"] == "Cluster"
    assert plain["status"] == {"loadBalancer": {}}
    assert headless["spec"]["clusterIPs"] == ["None"]
    assert 30000 <= np1_port <= 32767
    assert np1["spec"]["externalTrafficPolicy"] == "Cluster"
    assert taken_code == 422
    assert (forbidden_code, forbidden["details"]["causes"][0]["field"]) == (
        422,
        "spec.ports[0].nodePort",
    )
    assert (no_ports_code, no_ports["details"]["causes"][0]["field"]) == (422, "spec.ports")


async def test_secrets(http: aiohttp.ClientSession) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}
    code, created = await _call(
        http,
        "POST",
        f"{NS}/secrets",
        {**secret, "data": {"a": base64.b64encode(b"x").decode()}, "stringData": {"b": "hi"}},
    )
    bad_code, bad = await _call(
        http, "POST", f"{NS}/secrets", {**secret, "metadata": {"name": "s2"}, "data": {"a": "!!"}}
    )
    docker_code, docker = await _call(
        http,
        "POST",
        f"{NS}/secrets",
        {**secret, "metadata": {"name": "s3"}, "type": "kubernetes.io/dockerconfigjson"},
    )
    _, frozen = await _call(
        http,
        "POST",
        f"{NS}/secrets",
        {**secret, "metadata": {"name": "s4"}, "data": {"k": "dg=="}, "immutable": True},
    )
    change_code, change = await _call(
        http,
        "PATCH",
        f"{NS}/secrets/s4",
        {"data": {"k": "dw=="}},
        "application/merge-patch+json",
    )
    type_code, _ = await _call(
        http, "PATCH", f"{NS}/secrets/s1", {"type": "Other"}, "application/merge-patch+json"
    )
    del_code, deleted = await _call(http, "DELETE", f"{NS}/secrets/s1")

    assert code == 201 and created["type"] == "Opaque"
    assert created["data"] == {"a": "eA==", "b": "aGk="} and "stringData" not in created
    assert (bad_code, bad["message"]) == (
        400,
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0',
    )
    assert (docker_code, docker["details"]["causes"]) == (
        422,
        [
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": "data[.dockerconfigjson]",
            }
        ],
    )
    assert frozen["immutable"] is True
    assert (change_code, change["details"]["causes"][0]["message"]) == (
        422,
        "Forbidden: field is immutable when `immutable` is set",
    )
    assert type_code == 422
    assert del_code == 200 and deleted["kind"] == "Status"


async def test_endpoints_and_slices_are_stored(http: aiohttp.ClientSession) -> None:
    _, ep = await _call(
        http,
        "POST",
        f"{NS}/endpoints",
        {
            "metadata": {"name": "web"},
            "subsets": [{"addresses": [{"ip": "10.0.0.5"}], "ports": [{"port": 8080}]}],
        },
    )
    bad_code, _ = await _call(
        http,
        "POST",
        f"{NS}/endpoints",
        {"metadata": {"name": "bad"}, "subsets": [{"addresses": [{"ip": "x"}]}]},
    )
    _, sl = await _call(
        http,
        "POST",
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        {
            "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.5"]}],
            "ports": [{"port": 8080}],
        },
    )
    assert ep["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
    assert bad_code == 422
    assert sl["ports"] == [{"port": 8080, "protocol": "TCP", "name": ""}]
