"""The real kubectl against the workload kinds: `kubectl scale` (a merge patch of `scale`, and
with `--current-replicas` a GET and PUT of it), `create secret generic|docker-registry`,
`create service clusterip`, `create priorityclass` (a protobuf body) and `cluster-info` on
every installed version; `create deployment`, `create job`, `create cronjob`, `get` Tables,
`get all`, `rollout restart` (a strategic-merge patch of the template) and `delete` on one
version."""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane.api import kinds
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary
from draplane.testing.workloadbuilders import make_deployment, make_stateful_set

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)


async def test_scale(kubectl: Kubectl, server: HttpServer) -> None:
    client = server.client()
    await client.create(kinds.DEPLOYMENTS, make_deployment("web").obj())
    await client.create(kinds.STATEFUL_SETS, make_stateful_set("db").obj())

    scaled = await kubectl.run("scale", "deployment/web", "--replicas=3")
    checked = await kubectl.run("scale", "statefulset/db", "--current-replicas=1", "--replicas=2")
    refused = await kubectl.run(
        "scale", "statefulset/db", "--current-replicas=5", "--replicas=4", check=False
    )

    assert scaled.strip() == "deployment.apps/web scaled"
    assert checked.strip() == "statefulset.apps/db scaled"
    assert "Expected replicas to be 5, was 2" in refused
    web = await client.get(kinds.DEPLOYMENTS, "web", "default")
    db = await client.get(kinds.STATEFUL_SETS, "db", "default")
    assert (web["spec"]["replicas"], web["metadata"]["generation"]) == (3, 2)
    assert db["spec"]["replicas"] == 2


@pytest.fixture
def kubectl_one(server: HttpServer, tmp_path: Path) -> Kubectl:
    version = next((v for v in reversed(VERSIONS) if kubectl_binary(v)), None)
    assert version is not None
    binary = kubectl_binary(version)
    assert binary is not None
    return Kubectl(binary, version, server.kubeconfig_path, tmp_path / "kube-cache")


async def test_create_get_restart_delete(kubectl_one: Kubectl, server: HttpServer) -> None:
    kubectl = kubectl_one
    client = server.client()
    created = [
        await kubectl.run("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2"),
        await kubectl.run("create", "job", "once", "--image=busybox"),
        await kubectl.run("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *"),
    ]
    tables = await kubectl.run("get", "deployments,jobs,cronjobs")
    everything = await kubectl.run("get", "all", "-o", "name")
    restarted = await kubectl.run("rollout", "restart", "deployment/web")
    deleted = await kubectl.run("delete", "job", "once")

    assert [c.strip() for c in created] == [
        "deployment.apps/web created",
        "job.batch/once created",
        "cronjob.batch/tick created",
    ]
    lines = [line.split() for line in tables.splitlines()]
    assert lines[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert lines[1][:4] == ["deployment.apps/web", "0/2", "0", "0"]
    assert lines[3] == ["NAME", "COMPLETIONS", "DURATION", "AGE"]
    assert lines[4][:2] == ["job.batch/once", "0/1"]
    assert lines[6][:6] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST"]
    assert lines[7][:7] == ["cronjob.batch/tick", "*/5", "*", "*", "*", "*", "<none>"]
    assert set(everything.split()) >= {
        "deployment.apps/web",
        "job.batch/once",
        "cronjob.batch/tick",
    }
    assert restarted.strip() == "deployment.apps/web restarted"
    assert deleted.strip() == 'job.batch "once" deleted'
    web = await client.get(kinds.DEPLOYMENTS, "web", "default")
    annotations = web["spec"]["template"]["metadata"]["annotations"]
    assert "kubectl.kubernetes.io/restartedAt" in annotations
    assert web["metadata"]["generation"] == 2
    assert (await client.list(kinds.JOBS, "default"))["items"] == []


async def test_create_secret_and_service_and_cluster_info(
    kubectl: Kubectl, server: HttpServer
) -> None:
    client = server.client()
    generic = await kubectl.run("create", "secret", "generic", "app", "--from-literal=user=me")
    registry = await kubectl.run(
        "create",
        "secret",
        "docker-registry",
        "pull",
        "--docker-server=registry.example.com",
        "--docker-username=u",
        "--docker-password=p",
    )
    service = await kubectl.run("create", "service", "clusterip", "web", "--tcp=80:8080")
    info = await kubectl.run("cluster-info")

    assert generic.strip() == "secret/app created"
    assert registry.strip() == "secret/pull created"
    assert service.strip() == "service/web created"
    assert "Kubernetes control plane" in info and server.url in info
    app = await client.get(kinds.SECRETS, "app", "default")
    assert (app["type"], app["data"]) == ("Opaque", {"user": "bWU="})
    pull = await client.get(kinds.SECRETS, "pull", "default")
    assert pull["type"] == "kubernetes.io/dockerconfigjson"
    assert list(pull["data"]) == [".dockerconfigjson"]
    web = await client.get(kinds.SERVICES, "web", "default")
    assert web["spec"]["clusterIP"].startswith("10.")
    assert web["spec"]["ports"] == [
        {"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}
    ]


async def test_priority_classes(kubectl: Kubectl, server: HttpServer) -> None:
    # `create priorityclass` posts protobuf; `get` prints the PriorityClass columns.
    created = await kubectl.run(
        "create", "priorityclass", "gpu-high", "--value=100000", "--global-default"
    )
    second = await kubectl.run(
        "create", "priorityclass", "other", "--value=0", "--global-default", check=False
    )
    zero = await kubectl.run("create", "priorityclass", "zero", "--value=0")
    table = await kubectl.run("get", "priorityclasses")

    assert created.strip() == "priorityclass.scheduling.k8s.io/gpu-high created"
    assert "another PriorityClass gpu-high exists with globalDefault=true" in second
    assert zero.strip() == "priorityclass.scheduling.k8s.io/zero created"
    stored = await server.client().get(kinds.PRIORITY_CLASSES, "gpu-high")
    assert (stored["value"], stored["globalDefault"]) == (100000, True)
    assert stored["preemptionPolicy"] == "PreemptLowerPriority"
    assert (await server.client().get(kinds.PRIORITY_CLASSES, "zero"))["value"] == 0
    rows = [line.split() for line in table.splitlines()]
    assert rows[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert rows[1][:3] == ["gpu-high", "100000", "true"]
    assert {r[0] for r in rows[1:]} == {
        "gpu-high",
        "system-cluster-critical",
        "system-node-critical",
        "zero",
    }
