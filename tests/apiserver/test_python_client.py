"""The official `kubernetes` Python client (sync, run in a thread) against the HTTPS server in
this test's event loop: typed pods, typed and dynamic v1alpha2 ResourceClaims, watch."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client as k8s, config as k8s_config, dynamic, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from draplane.api import kinds  # noqa: E402
from draplane.testing.builders import make_claim, make_pod  # noqa: E402
from draplane.testing.hostile import seed  # noqa: E402
from draplane.testing.httpserver import HttpServer  # noqa: E402


@pytest.fixture
def api_client(server: HttpServer) -> Any:
    api = k8s_config.new_client_from_config(config_file=str(server.kubeconfig_path))
    yield api
    api.close()
    api.rest_client.pool_manager.clear()  # ApiClient.close() leaves its connections open


async def test_pod_list_create_patch_delete(server: HttpServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)

    def scenario() -> tuple[Any, ...]:
        created = core.create_namespaced_pod("default", make_pod("py").obj())
        names = [p.metadata.name for p in core.list_namespaced_pod("default").items]
        everywhere = [p.metadata.name for p in core.list_pod_for_all_namespaces().items]
        patched = core.patch_namespaced_pod("py", "default", {"metadata": {"labels": {"a": "b"}}})
        core.delete_namespaced_pod("py", "default", grace_period_seconds=0)
        try:
            core.read_namespaced_pod("py", "default")
            missing = 200
        except ApiException as err:
            missing = err.status
        return created, names, everywhere, patched, missing

    created, names, everywhere, patched, missing = await asyncio.to_thread(scenario)

    assert created.metadata.uid and created.spec.containers[0].name == "ctr"
    assert names == ["py"] and everywhere == ["py"]
    assert patched.metadata.labels == {"a": "b"}
    assert missing == 404
    assert (await server.client().list(kinds.PODS))["items"] == []


async def test_watch_sees_added_and_modified(server: HttpServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)
    await server.client().create(kinds.PODS, make_pod("w").obj())
    first_seen = threading.Event()

    def watch_pods() -> list[tuple[str, str, dict[str, str] | None]]:
        seen = []
        w = watch.Watch()
        for event in w.stream(core.list_namespaced_pod, "default", timeout_seconds=10):
            pod = event["object"]
            seen.append((event["type"], pod.metadata.name, pod.metadata.labels))
            first_seen.set()
            if event["type"] == "MODIFIED":
                w.stop()
        return seen

    watching = asyncio.create_task(asyncio.to_thread(watch_pods))
    assert await asyncio.to_thread(first_seen.wait, 5)
    await server.client().patch(kinds.PODS, "w", {"metadata": {"labels": {"x": "y"}}}, "default")
    seen = await asyncio.wait_for(watching, timeout=10)

    assert seen == [("ADDED", "w", None), ("MODIFIED", "w", {"x": "y"})]


async def test_typed_resource_v1alpha2_claims(server: HttpServer, api_client: Any) -> None:
    resource_api = k8s.ResourceV1alpha2Api(api_client)
    await server.client().create(kinds.RESOURCE_CLAIMS, make_claim("typed").obj())

    claims = await asyncio.to_thread(resource_api.list_namespaced_resource_claim, "default")

    assert [(c.metadata.name, c.spec.resource_class_name) for c in claims.items] == [
        ("typed", "example")
    ]


async def test_dynamic_client_resource_claims(server: HttpServer, api_client: Any) -> None:
    def scenario() -> tuple[Any, ...]:
        dyn = dynamic.DynamicClient(api_client)
        claims = dyn.resources.get(api_version="resource.k8s.io/v1alpha2", kind="ResourceClaim")
        created = claims.create(body=make_claim("dyn").obj(), namespace="default")
        listed = [c.metadata.name for c in claims.get(namespace="default").items]
        patched = claims.patch(
            name="dyn",
            namespace="default",
            body={"metadata": {"labels": {"l": "1"}}},
            content_type="application/merge-patch+json",
        )
        claims.delete(name="dyn", namespace="default")
        return created, listed, patched

    created, listed, patched = await asyncio.to_thread(scenario)

    assert created.kind == "ResourceClaim" and created.metadata.uid
    assert listed == ["dyn"]
    assert patched.to_dict()["metadata"]["labels"] == {"l": "1"}
    assert (await server.client().list(kinds.RESOURCE_CLAIMS, "default"))["items"] == []


async def test_typed_pod_replace_and_watch_that_times_out(
    server: HttpServer, api_client: Any
) -> None:
    core = k8s.CoreV1Api(api_client)
    await server.client().create(kinds.PODS, make_pod("t").obj())

    def scenario() -> tuple[Any, list[tuple[str, str]], float]:
        pod = core.read_namespaced_pod("t", "default")
        pod.metadata.annotations = {"edited": "yes"}
        replaced = core.replace_namespaced_pod("t", "default", pod)
        start = time.monotonic()
        events = [
            (e["type"], e["object"].metadata.name)
            for e in watch.Watch().stream(core.list_namespaced_pod, "default", timeout_seconds=1)
        ]
        return replaced, events, time.monotonic() - start

    replaced, events, took = await asyncio.to_thread(scenario)

    assert replaced.metadata.annotations == {"edited": "yes"}
    assert events == [("ADDED", "t")]
    assert took < 5


async def test_dynamic_client_watches_resource_claims(server: HttpServer, api_client: Any) -> None:
    first_seen = threading.Event()

    def watch_claims() -> list[tuple[str, str]]:
        # Discovery is a blocking request: never on the event loop that serves it.
        dyn = dynamic.DynamicClient(api_client)
        claims = dyn.resources.get(api_version="resource.k8s.io/v1alpha2", kind="ResourceClaim")
        seen = []
        for event in claims.watch(namespace="default", timeout=10):
            seen.append((event["type"], event["object"].metadata.name))
            first_seen.set()
            if event["type"] == "DELETED":
                break
        return seen

    await server.client().create(kinds.RESOURCE_CLAIMS, make_claim("dw").obj())
    watching = asyncio.create_task(asyncio.to_thread(watch_claims))
    assert await asyncio.to_thread(first_seen.wait, 5)
    await server.client().delete(kinds.RESOURCE_CLAIMS, "dw", "default")
    seen = await asyncio.wait_for(watching, timeout=10)

    assert seen == [("ADDED", "dw"), ("DELETED", "dw")]


async def test_discovery_apis_with_trailing_slash_paths(api_client: Any) -> None:
    def scenario() -> tuple[Any, ...]:
        return (
            k8s.VersionApi(api_client).get_code(),
            k8s.CoreApi(api_client).get_api_versions(),
            k8s.CoreV1Api(api_client).get_api_resources(),
            k8s.ApisApi(api_client).get_api_versions(),
            k8s.ResourceApi(api_client).get_api_group(),
            k8s.ResourceV1alpha2Api(api_client).get_api_resources(),
        )

    version, core, core_v1, groups, resource, resource_v1alpha2 = await asyncio.to_thread(scenario)

    assert (version.major, version.minor) == ("1", "28")
    assert core.versions == ["v1"]
    assert "pods" in [r.name for r in core_v1.resources]
    assert "resource.k8s.io" in [g.name for g in groups.groups]
    assert resource.preferred_version.group_version == "resource.k8s.io/v1alpha2"
    assert "resourceclaims" in [r.name for r in resource_v1alpha2.resources]


async def test_typed_deletes_and_empty_structs_of_resource_kinds(
    server: HttpServer, api_client: Any
) -> None:
    resource = k8s.ResourceV1alpha2Api(api_client)
    template = {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {"spec": {"resourceClassName": "example"}},
    }
    cls = {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceClass",
        "metadata": {"name": "gpu"},
        "driverName": "driver.example.com",
    }

    def scenario() -> tuple[Any, ...]:
        claim = resource.create_namespaced_resource_claim("default", make_claim("c").obj())
        resource.create_namespaced_resource_claim_template("default", template)
        resource.create_resource_class(cls)
        deleted = (
            resource.delete_namespaced_resource_claim("c", "default"),
            resource.delete_namespaced_resource_claim_template("t", "default"),
            resource.delete_resource_class("gpu"),
        )
        return claim, deleted

    claim, deleted = await asyncio.to_thread(scenario)
    raw = await server.client().create(kinds.RESOURCE_CLAIMS, make_claim("raw").obj())
    stored_template = await server.client().create(
        kinds.RESOURCE_CLAIM_TEMPLATES, template, "default"
    )

    assert claim.status is not None
    assert [d.metadata.name for d in deleted] == ["c", "t", "gpu"]
    assert raw["status"] == {}
    assert stored_template["spec"]["metadata"] == {"creationTimestamp": None}


_TYPED_LISTS = {
    kinds.PODS: ("CoreV1Api", "list_pod_for_all_namespaces"),
    kinds.NODES: ("CoreV1Api", "list_node"),
    kinds.NAMESPACES: ("CoreV1Api", "list_namespace"),
    kinds.EVENTS: ("CoreV1Api", "list_event_for_all_namespaces"),
    kinds.CONFIGMAPS: ("CoreV1Api", "list_config_map_for_all_namespaces"),
    kinds.SERVICE_ACCOUNTS: ("CoreV1Api", "list_service_account_for_all_namespaces"),
    kinds.LEASES: ("CoordinationV1Api", "list_lease_for_all_namespaces"),
    kinds.PRIORITY_CLASSES: ("SchedulingV1Api", "list_priority_class"),
    kinds.RESOURCE_CLASSES: ("ResourceV1alpha2Api", "list_resource_class"),
    kinds.RESOURCE_CLAIMS: ("ResourceV1alpha2Api", "list_resource_claim_for_all_namespaces"),
    kinds.RESOURCE_CLAIM_TEMPLATES: (
        "ResourceV1alpha2Api",
        "list_resource_claim_template_for_all_namespaces",
    ),
    kinds.POD_SCHEDULING_CONTEXTS: (
        "ResourceV1alpha2Api",
        "list_pod_scheduling_context_for_all_namespaces",
    ),
    kinds.ROLES: ("RbacAuthorizationV1Api", "list_role_for_all_namespaces"),
    kinds.CLUSTER_ROLES: ("RbacAuthorizationV1Api", "list_cluster_role"),
    kinds.ROLE_BINDINGS: ("RbacAuthorizationV1Api", "list_role_binding_for_all_namespaces"),
    kinds.CLUSTER_ROLE_BINDINGS: ("RbacAuthorizationV1Api", "list_cluster_role_binding"),
    kinds.CUSTOM_RESOURCE_DEFINITIONS: (
        "ApiextensionsV1Api",
        "list_custom_resource_definition",
    ),
    kinds.DEPLOYMENTS: ("AppsV1Api", "list_deployment_for_all_namespaces"),
    kinds.REPLICA_SETS: ("AppsV1Api", "list_replica_set_for_all_namespaces"),
    kinds.STATEFUL_SETS: ("AppsV1Api", "list_stateful_set_for_all_namespaces"),
    kinds.DAEMON_SETS: ("AppsV1Api", "list_daemon_set_for_all_namespaces"),
    kinds.CONTROLLER_REVISIONS: ("AppsV1Api", "list_controller_revision_for_all_namespaces"),
    kinds.JOBS: ("BatchV1Api", "list_job_for_all_namespaces"),
    kinds.CRON_JOBS: ("BatchV1Api", "list_cron_job_for_all_namespaces"),
    kinds.SECRETS: ("CoreV1Api", "list_secret_for_all_namespaces"),
    kinds.SERVICES: ("CoreV1Api", "list_service_for_all_namespaces"),
    kinds.ENDPOINTS: ("CoreV1Api", "list_endpoints_for_all_namespaces"),
    kinds.ENDPOINT_SLICES: ("DiscoveryV1Api", "list_endpoint_slice_for_all_namespaces"),
    kinds.PERSISTENT_VOLUMES: ("CoreV1Api", "list_persistent_volume"),
    kinds.PERSISTENT_VOLUME_CLAIMS: (
        "CoreV1Api",
        "list_persistent_volume_claim_for_all_namespaces",
    ),
    kinds.REPLICATION_CONTROLLERS: (
        "CoreV1Api",
        "list_replication_controller_for_all_namespaces",
    ),
    kinds.STORAGE_CLASSES: ("StorageV1Api", "list_storage_class"),
    kinds.CSI_DRIVERS: ("StorageV1Api", "list_csi_driver"),
    kinds.CSI_NODES: ("StorageV1Api", "list_csi_node"),
    kinds.CSI_STORAGE_CAPACITIES: (
        "StorageV1Api",
        "list_csi_storage_capacity_for_all_namespaces",
    ),
    kinds.VOLUME_ATTACHMENTS: ("StorageV1Api", "list_volume_attachment"),
    kinds.POD_DISRUPTION_BUDGETS: ("PolicyV1Api", "list_pod_disruption_budget_for_all_namespaces"),
    kinds.RESOURCE_QUOTAS: ("CoreV1Api", "list_resource_quota_for_all_namespaces"),
    kinds.LIMIT_RANGES: ("CoreV1Api", "list_limit_range_for_all_namespaces"),
}


async def test_typed_lists_of_every_stored_kind(server: HttpServer, api_client: Any) -> None:
    """The typed models (which refuse a null where a field is required) read every stored kind
    as the server serializes it: empty structs, null times, zero values."""
    seeded = await seed(server)

    def scenario() -> dict[str, list[str]]:
        names: dict[str, list[str]] = {}
        for rt, (api, method) in _TYPED_LISTS.items():
            items = getattr(getattr(k8s, api)(api_client), method)().items
            names[rt.kind] = [item.metadata.name for item in items]
        return names

    names = await asyncio.to_thread(scenario)

    assert set(_TYPED_LISTS) == set(kinds.STORED)
    for rt, obj in seeded.items():
        if rt in _TYPED_LISTS:
            assert obj["metadata"]["name"] in names[rt.kind], rt.kind
