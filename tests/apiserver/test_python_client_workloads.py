"""The official `kubernetes` Python client (30.x, sync, in a thread) drives every workload kind:
AppsV1Api and BatchV1Api create, read, list, patch, the scale and status subresources, and
delete (a Status for these kinds; a batch/v1 Job without a propagation policy is orphaned and
answered with the Job, as upstream)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client as k8s, config as k8s_config  # noqa: E402

from draplane.api import kinds  # noqa: E402
from draplane.testing.httpserver import HttpServer  # noqa: E402
from draplane.testing.workloadbuilders import (  # noqa: E402
    make_controller_revision,
    make_cron_job,
    make_daemon_set,
    make_deployment,
    make_job,
    make_replica_set,
    make_stateful_set,
)


@pytest.fixture
def api_client(server: HttpServer) -> Iterator[Any]:
    api = k8s_config.new_client_from_config(config_file=str(server.kubeconfig_path))
    yield api
    api.close()
    api.rest_client.pool_manager.clear()


async def test_apps_v1(server: HttpServer, api_client: Any) -> None:
    apps = k8s.AppsV1Api(api_client)
    ns = "default"

    def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        d = apps.create_namespaced_deployment(ns, make_deployment("web").replicas(2).obj())
        out["strategy"] = d.spec.strategy.rolling_update.max_surge
        out["scale"] = apps.read_namespaced_deployment_scale("web", ns).spec.replicas
        scaled = apps.patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 5}})
        out["scaled"] = scaled.spec.replicas
        replaced = apps.replace_namespaced_deployment_scale(
            "web", ns, k8s.V1Scale(metadata=k8s.V1ObjectMeta(name="web"), spec={"replicas": 1})
        )
        out["replaced"] = replaced.spec.replicas
        status = apps.read_namespaced_deployment_status("web", ns)
        status.status = k8s.V1DeploymentStatus(replicas=1, ready_replicas=1)
        out["status"] = apps.replace_namespaced_deployment_status("web", ns, status).status
        apps.create_namespaced_replica_set(ns, make_replica_set("rs").obj())
        out["rs_scale"] = apps.patch_namespaced_replica_set_scale(
            "rs", ns, {"spec": {"replicas": 3}}
        ).status.selector
        apps.create_namespaced_stateful_set(ns, make_stateful_set("db").obj())
        out["sts"] = apps.read_namespaced_stateful_set("db", ns).spec.pod_management_policy
        out["sts_scale"] = apps.read_namespaced_stateful_set_scale("db", ns).spec.replicas
        apps.create_namespaced_daemon_set(ns, make_daemon_set("agent").obj())
        out["ds"] = apps.read_namespaced_daemon_set("agent", ns).spec.update_strategy.type
        apps.create_namespaced_controller_revision(ns, make_controller_revision("db-1").obj())
        out["revisions"] = [r.revision for r in apps.list_namespaced_controller_revision(ns).items]
        out["deployments"] = [
            d.metadata.name for d in apps.list_deployment_for_all_namespaces().items
        ]
        out["deleted"] = [
            apps.delete_namespaced_deployment("web", ns).status,
            apps.delete_namespaced_replica_set("rs", ns).status,
            apps.delete_namespaced_stateful_set("db", ns).status,
            apps.delete_namespaced_daemon_set("agent", ns).status,
            apps.delete_namespaced_controller_revision("db-1", ns).status,
        ]
        return out

    out = await asyncio.to_thread(scenario)

    assert out["strategy"] == "25%"
    assert (out["scale"], out["scaled"], out["replaced"]) == (2, 5, 1)
    assert (out["status"].replicas, out["status"].ready_replicas) == (1, 1)
    assert out["rs_scale"] == "app=rs"
    assert (out["sts"], out["sts_scale"]) == ("OrderedReady", 1)
    assert out["ds"] == "RollingUpdate"
    assert out["revisions"] == [1]
    assert out["deployments"] == ["web"]
    assert out["deleted"] == ["Success"] * 5
    client = server.client()
    for rt in (kinds.DEPLOYMENTS, kinds.REPLICA_SETS, kinds.STATEFUL_SETS, kinds.DAEMON_SETS):
        assert (await client.list(rt, "default"))["items"] == []


async def test_batch_v1(server: HttpServer, api_client: Any) -> None:
    batch = k8s.BatchV1Api(api_client)
    ns = "default"

    def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        job = batch.create_namespaced_job(ns, make_job("once").obj())
        out["job"] = (job.spec.completions, job.spec.backoff_limit, job.spec.completion_mode)
        out["selector"] = sorted(job.spec.selector.match_labels)
        patched = batch.patch_namespaced_job("once", ns, {"spec": {"parallelism": 0}})
        out["parallelism"] = patched.spec.parallelism
        cj = batch.create_namespaced_cron_job(ns, make_cron_job("tick").obj())
        out["cron"] = (cj.spec.concurrency_policy, cj.spec.successful_jobs_history_limit)
        out["cron_list"] = [c.metadata.name for c in batch.list_namespaced_cron_job(ns).items]
        orphaned = batch.delete_namespaced_job("once", ns)
        out["job_delete"] = orphaned.kind
        out["cron_delete"] = batch.delete_namespaced_cron_job("tick", ns).status
        return out

    out = await asyncio.to_thread(scenario)

    assert out["job"] == (1, 6, "NonIndexed")
    assert out["selector"] == ["batch.kubernetes.io/controller-uid"]
    assert out["parallelism"] == 0
    assert out["cron"] == ("Allow", 3)
    assert out["cron_list"] == ["tick"]
    assert out["job_delete"] == "Job"  # orphaned: the Job stays with the orphan finalizer
    assert out["cron_delete"] == "Success"
    job = await server.client().get(kinds.JOBS, "once", "default")
    assert job["metadata"]["finalizers"] == ["orphan"]


async def test_core_v1_secrets_services_endpoints(server: HttpServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)
    discovery = k8s.DiscoveryV1Api(api_client)
    ns = "default"

    def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        secret = core.create_namespaced_secret(
            ns, k8s.V1Secret(metadata=k8s.V1ObjectMeta(name="s"), string_data={"k": "v"})
        )
        out["secret"] = (secret.type, secret.data)
        svc = core.create_namespaced_service(
            ns,
            k8s.V1Service(
                metadata=k8s.V1ObjectMeta(name="web"),
                spec=k8s.V1ServiceSpec(selector={"app": "web"}, ports=[k8s.V1ServicePort(port=80)]),
            ),
        )
        out["svc"] = (svc.spec.cluster_ip, svc.spec.ports[0].target_port)
        out["kubernetes"] = core.read_namespaced_service("kubernetes", ns).spec.cluster_ip
        ep = core.read_namespaced_endpoints("kubernetes", ns)
        out["ep"] = ep.subsets[0].addresses[0].ip
        out["slices"] = [
            s.metadata.name for s in discovery.list_namespaced_endpoint_slice(ns).items
        ]
        out["deleted"] = (
            core.delete_namespaced_secret("s", ns).status,
            core.delete_namespaced_service("web", ns).metadata.name,
        )
        return out

    out = await asyncio.to_thread(scenario)

    assert out["secret"] == ("Opaque", {"k": "dg=="})
    assert out["svc"][0].startswith("10.96.") and out["svc"][1] == 80
    assert out["kubernetes"] == "10.96.0.1"
    assert out["ep"] == "127.0.0.1"
    assert out["slices"] == ["kubernetes"]
    assert out["deleted"] == ("Success", "web")  # a Service DELETE returns the Service
