"""Non-resource endpoints over HTTPS: version, discovery, /openapi/v2, health, metrics, and
bearer-token authentication (401s, tokens added while running)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import errors, kinds
from draplane.apiserver import openapi
from draplane.testing.exposition import check_component_exposition, series_names
from draplane.testing.httpserver import HttpServer

AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


@pytest.fixture
async def user(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    """An authenticated user with no bindings but group system:monitoring (health checks)."""
    token = server.token("watcher", ("system:monitoring",))
    async with aiohttp.ClientSession(
        base_url=server.url,
        connector=aiohttp.TCPConnector(ssl=server.ssl_context()),
        headers={"Authorization": f"Bearer {token}"},
    ) as session:
        yield session


async def _get(session: aiohttp.ClientSession, path: str, **headers: str) -> tuple[int, Any]:
    async with session.get(path, headers=headers) as resp:
        body = await resp.read()
        if resp.content_type == "application/json":
            return resp.status, orjson.loads(body)
        return resp.status, body.decode(errors="replace")


async def test_version_is_1_28_semver(user: aiohttp.ClientSession) -> None:
    code, version = await _get(user, "/version")

    assert code == 200
    assert (version["major"], version["minor"]) == ("1", "28")
    assert version["gitVersion"].startswith("v1.28.")
    assert {"gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"} <= set(
        version
    )


async def test_api_and_apis_answer_legacy_json_even_for_aggregated_accept(
    user: aiohttp.ClientSession,
) -> None:
    async with user.get("/apis", headers={"Accept": AGGREGATED_ACCEPT}) as resp:
        content_type = resp.headers["Content-Type"]
        groups = orjson.loads(await resp.read())
    code, api = await _get(user, "/api", Accept=AGGREGATED_ACCEPT)

    assert content_type == "application/json"
    assert (code, api["kind"], api["versions"]) == (200, "APIVersions", ["v1"])
    by_name = {g["name"]: g for g in groups["groups"]}
    assert set(by_name) == {
        "resource.k8s.io",
        "events.k8s.io",
        "coordination.k8s.io",
        "rbac.authorization.k8s.io",
        "authorization.k8s.io",
        "authentication.k8s.io",
        "apps",
        "batch",
        "discovery.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "policy",
        "apiextensions.k8s.io",
    }
    assert by_name["resource.k8s.io"]["preferredVersion"] == {
        "groupVersion": "resource.k8s.io/v1alpha2",
        "version": "v1alpha2",
    }


@pytest.mark.parametrize(
    ("path", "name", "expected"),
    [
        pytest.param(
            "/api/v1",
            "pods",
            {
                "singularName": "pod",
                "namespaced": True,
                "kind": "Pod",
                "shortNames": ["po"],
                "categories": ["all"],
            },
            id="pods",
        ),
        pytest.param(
            "/api/v1", "pods/binding", {"kind": "Binding", "verbs": ["create"]}, id="pods-binding"
        ),
        pytest.param(
            "/api/v1",
            "pods/status",
            {"kind": "Pod", "verbs": ["get", "patch", "update"]},
            id="pods-status",
        ),
        pytest.param("/api/v1", "nodes", {"namespaced": False, "shortNames": ["no"]}, id="nodes"),
        pytest.param(
            "/apis/resource.k8s.io/v1alpha2",
            "resourceclaims",
            {"kind": "ResourceClaim", "namespaced": True, "singularName": "resourceclaim"},
            id="resourceclaims",
        ),
        pytest.param(
            "/apis/resource.k8s.io/v1alpha2",
            "resourceclaims/status",
            {"kind": "ResourceClaim"},
            id="resourceclaims-status",
        ),
        pytest.param("/apis/coordination.k8s.io/v1", "leases", {"kind": "Lease"}, id="leases"),
        pytest.param(
            "/api/v1",
            "persistentvolumeclaims",
            {"kind": "PersistentVolumeClaim", "namespaced": True, "shortNames": ["pvc"]},
            id="persistentvolumeclaims",
        ),
        pytest.param(
            "/api/v1", "persistentvolumes/status", {"kind": "PersistentVolume"}, id="pv-status"
        ),
        pytest.param(
            "/api/v1",
            "replicationcontrollers",
            {"shortNames": ["rc"], "categories": ["all"]},
            id="replicationcontrollers",
        ),
        pytest.param("/api/v1", "replicationcontrollers/scale", {"kind": "Scale"}, id="rc-scale"),
        pytest.param(
            "/apis/storage.k8s.io/v1",
            "storageclasses",
            {"kind": "StorageClass", "namespaced": False, "shortNames": ["sc"]},
            id="storageclasses",
        ),
        pytest.param(
            "/apis/storage.k8s.io/v1",
            "csistoragecapacities",
            {"kind": "CSIStorageCapacity", "namespaced": True},
            id="csistoragecapacities",
        ),
        pytest.param(
            "/apis/storage.k8s.io/v1",
            "volumeattachments/status",
            {"kind": "VolumeAttachment"},
            id="volumeattachments-status",
        ),
        pytest.param(
            "/apis/policy/v1",
            "poddisruptionbudgets",
            {"kind": "PodDisruptionBudget", "shortNames": ["pdb"]},
            id="poddisruptionbudgets",
        ),
    ],
)
async def test_resource_lists(
    user: aiohttp.ClientSession, path: str, name: str, expected: dict[str, Any]
) -> None:
    code, resources = await _get(user, path)

    assert (code, resources["kind"]) == (200, "APIResourceList")
    entry = next(r for r in resources["resources"] if r["name"] == name)
    assert {k: entry[k] for k in expected} == expected


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        pytest.param("/version/", None, id="version"),
        pytest.param("/api/", "APIVersions", id="api"),
        pytest.param("/api/v1/", "APIResourceList", id="api-v1"),
        pytest.param("/apis/", "APIGroupList", id="apis"),
        pytest.param("/apis/resource.k8s.io/", "APIGroup", id="group"),
        pytest.param("/apis/resource.k8s.io/v1alpha2/", "APIResourceList", id="group-version"),
    ],
)
async def test_discovery_answers_with_and_without_a_trailing_slash(
    user: aiohttp.ClientSession, path: str, kind: str | None
) -> None:
    with_slash = await _get(user, path)
    without = await _get(user, path.rstrip("/"))

    assert with_slash == without
    assert with_slash[0] == 200
    assert with_slash[1].get("kind") == kind


async def test_every_served_kind_is_discoverable(user: aiohttp.ClientSession) -> None:
    found = set()
    for rt in kinds.SERVED:
        path = "/api/v1" if not rt.group else f"/apis/{rt.group}/{rt.version}"
        _, resources = await _get(user, path)
        found |= {(resources["groupVersion"], r["name"]) for r in resources["resources"]}

    assert {(rt.api_version, rt.resource) for rt in kinds.SERVED} <= found


@pytest.mark.parametrize(
    ("path", "code", "kind"),
    [
        pytest.param("/apis/resource.k8s.io", 200, "APIGroup", id="group"),
        pytest.param("/apis/nope.example.com", 404, "Status", id="unknown-group"),
        pytest.param("/apis/resource.k8s.io/v9", 404, "Status", id="unknown-version"),
        pytest.param("/nothing/here", 404, "Status", id="unknown-path"),
    ],
)
async def test_group_documents(
    http: aiohttp.ClientSession, path: str, code: int, kind: str
) -> None:
    got_code, body = await _get(http, path)

    assert (got_code, body["kind"]) == (code, kind)


async def test_openapi_v2_is_the_minimal_protobuf_document(
    user: aiohttp.ClientSession,
) -> None:
    accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    async with user.get("/openapi/v2", headers={"Accept": accept}) as resp:
        body = await resp.read()

    assert resp.status == 200
    assert resp.headers["Content-Type"] == openapi.CONTENT_TYPE
    assert body.startswith(b"\x0a\x032.0\x12")
    assert b"Kubernetes" in body


@pytest.mark.parametrize(
    ("path", "code", "body"),
    [
        pytest.param("/healthz", 200, "ok", id="healthz"),
        pytest.param("/livez", 200, "ok", id="livez"),
        pytest.param("/readyz", 200, "ok", id="readyz"),
        pytest.param(
            "/readyz?verbose",
            200,
            "[+]ping ok\n[+]storage ok\nreadyz check passed\n",
            id="readyz-verbose",
        ),
        pytest.param(
            "/readyz?verbose&exclude=storage",
            200,
            "[+]ping ok\n[+]storage excluded: ok\nreadyz check passed\n",
            id="readyz-exclude",
        ),
        pytest.param("/readyz/storage", 200, "ok", id="single-check"),
        pytest.param("/livez/nope", 404, "404 page not found\n", id="unknown-check"),
    ],
)
async def test_health_endpoints(
    user: aiohttp.ClientSession, path: str, code: int, body: str
) -> None:
    assert await _get(user, path) == (code, body)


async def test_failing_ready_check_fails_readyz(
    server: HttpServer, user: aiohttp.ClientSession
) -> None:
    async def informers_synced() -> bool:
        return False

    server.server.add_ready_check("informers-synced", informers_synced)

    code, body = await _get(user, "/readyz?verbose")

    assert code == 500
    assert "[-]informers-synced failed: reason withheld" in body
    assert body.endswith("readyz check failed\n")
    assert (await _get(user, "/livez"))[0] == 200


async def test_metrics_count_requests_by_verb_resource_and_code(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    client = server.client()
    await client.list(kinds.PODS)
    with pytest.raises(errors.StatusError):
        await client.get(kinds.PODS, "missing", "default")

    metrics = await _metrics(http)

    assert (
        'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",'
        'resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 1.0'
    ) in metrics
    assert (
        'apiserver_request_total{code="404",component="apiserver",dry_run="",group="",'
        'resource="pods",scope="resource",subresource="",verb="GET",version="v1"} 1.0'
    ) in metrics
    assert "apiserver_request_duration_seconds_bucket" in metrics


async def test_metrics_carry_process_series_and_no_created_series(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().list(kinds.PODS)

    metrics = await _metrics(http)

    check_component_exposition(metrics)
    assert "apiserver_request_total" in series_names(metrics)


async def _metrics(http: aiohttp.ClientSession) -> str:
    async with http.get("/metrics") as resp:
        assert resp.status == 200
        return await resp.text()


@pytest.mark.parametrize(
    ("path", "authorization"),
    [
        pytest.param("/api/v1/namespaces", "Bearer wrong", id="unknown-token"),
        pytest.param("/api/v1/namespaces", "Basic YWRtaW46YWRtaW4=", id="basic-auth"),
        pytest.param("/version", "Bearer wrong", id="bad-token-even-for-public-paths"),
    ],
)
async def test_requests_with_bad_credentials_are_401(
    anonymous: aiohttp.ClientSession, path: str, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}

    code, status = await _get(anonymous, path, **headers)

    assert (code, status["kind"], status["reason"], status["code"]) == (
        401,
        "Status",
        "Unauthorized",
        401,
    )


@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        pytest.param("/version", 200, None, id="version"),
        pytest.param("/healthz", 200, None, id="healthz"),
        pytest.param("/readyz", 200, None, id="readyz"),
        pytest.param(
            "/api",
            403,
            'forbidden: User "system:anonymous" cannot get path "/api"',
            id="discovery-needs-a-user",
        ),
        pytest.param(
            "/openapi/v2",
            403,
            'forbidden: User "system:anonymous" cannot get path "/openapi/v2"',
            id="openapi-needs-a-user",
        ),
        pytest.param(
            "/metrics",
            403,
            'forbidden: User "system:anonymous" cannot get path "/metrics"',
            id="metrics",
        ),
        pytest.param(
            "/api/v1/namespaces",
            403,
            'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" '
            'in API group "" at the cluster scope',
            id="resources",
        ),
    ],
)
async def test_requests_without_credentials_are_anonymous(
    anonymous: aiohttp.ClientSession, path: str, code: int, message: str | None
) -> None:
    got, body = await _get(anonymous, path)

    assert got == code
    if message is not None:
        assert (body["reason"], body["message"]) == ("Forbidden", message)


async def test_token_added_while_running_authenticates(
    server: HttpServer, anonymous: aiohttp.ClientSession
) -> None:
    token = server.token("system:node:late-node")

    code, body = await _get(
        anonymous,
        "/api/v1/nodes?fieldSelector=metadata.name=late-node",
        Authorization=f"Bearer {token}",
    )

    assert (code, body["kind"]) == (200, "NodeList")


async def test_bootstrap_files(server: HttpServer) -> None:
    tokens = (server.data_dir / "tokens").read_text().splitlines()
    users = {line.split(",")[1]: line for line in tokens}

    assert (server.data_dir / "ca.crt").read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert users["admin"].endswith(',"system:masters"')
    assert {
        "system:kube-scheduler",
        "system:kube-controller-manager",
        "system:serviceaccount:kube-system:resource-claim-controller",
        "system:serviceaccount:kube-system:driver.example.com-controller",
    } <= set(users)
    config = server.kubeconfig()
    assert (config.server, config.user) == (server.url, "admin")
