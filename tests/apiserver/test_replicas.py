"""Two API server replicas on one etcd prefix and one data dir, started at the same moment: they
serve the same CA, tokens and signing key, their start-up writes do not collide, each has its
own watch cache fed from etcd (a write through one reaches watchers of the other at the same
resourceVersion; kubectl against either sees the same object), and the RBAC and
node-authorizer caches of each follow writes made through the other. A RESTClient given both
URLs fails over when one replica stops, for requests and for an informer's watch.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from draplane.api import errors, kinds, meta
from draplane.api.auth import ADMIN, SYSTEM_NODES
from draplane.api.meta import Obj
from draplane.apiserver.kubeconfig import dump_kubeconfig, kubeconfig_for_user
from draplane.client.informer import Informer
from draplane.client.kubeconfig import load_kubeconfig
from draplane.client.rest import RESTClient
from draplane.storage.etcd import EtcdStorage
from draplane.storage.etcd_process import EtcdCluster
from draplane.storage.etcd_rpc import EtcdConfig
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.etcd import fresh_prefix
from draplane.testing.httpserver import HttpServer, start_http_server
from draplane.testing.kubectl import Kubectl, kubectl_binary

TIMEOUT = 10.0


@pytest.fixture
async def replicas(tmp_path: Path, etcd_cluster: EtcdCluster) -> AsyncIterator[list[HttpServer]]:
    prefix = fresh_prefix()

    def store() -> EtcdStorage:
        config = EtcdConfig(tuple(etcd_cluster.client_urls), prefix=prefix)
        return EtcdStorage(config, compaction_interval=0, start_timeout=10.0)

    data_dir = tmp_path / "data"
    started = await asyncio.gather(
        start_http_server(data_dir, storage=store()), start_http_server(data_dir, storage=store())
    )
    try:
        yield list(started)
    finally:
        for server in started:
            await server.stop()


def node_client(server: HttpServer, node: str) -> RESTClient:
    return server.client(f"system:node:{node}", (SYSTEM_NODES,))


async def allowed(client: RESTClient, rt: kinds.ResourceType, name: str) -> bool:
    try:
        await client.get(rt, name, "default")
    except errors.StatusError as err:
        if err.code == 403:
            return False
        raise
    return True


async def test_replicas_share_the_data_dir_and_start_up_writes(
    replicas: list[HttpServer],
) -> None:
    a, b = replicas
    config_a, config_b = a.kubeconfig(), b.kubeconfig()
    assert config_a.ca_pem == config_b.ca_pem
    # One signing key: a service account token issued by A authenticates on B.
    sa: Obj = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
    admin_a, admin_b = a.client(), b.client()
    await admin_a.create(kinds.SERVICE_ACCOUNTS, sa, "default")
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    token = await admin_a.create(
        kinds.SERVICE_ACCOUNTS, request, "default", subresource="token", name="robot"
    )
    robot = RESTClient(replace(config_b, server=b.url, token=token["status"]["token"]))
    try:
        review = await robot.request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        )
    finally:
        await robot.close()
    assert review["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
    names = {meta.name(ns) for ns in (await admin_b.list(kinds.NAMESPACES))["items"]}
    assert {"default", "kube-system", "kube-node-lease", "kube-public"} <= names
    roles = (await admin_b.list(kinds.CLUSTER_ROLES))["items"]
    assert len(roles) == len({meta.name(r) for r in roles})
    assert "system:kube-scheduler" in {meta.name(r) for r in roles}


async def test_a_write_through_one_replica_reaches_watchers_of_the_other(
    replicas: list[HttpServer],
) -> None:
    a, b = replicas
    admin_a, admin_b = a.client(), b.client()
    start = (await admin_b.list(kinds.CONFIGMAPS, "default"))["metadata"]["resourceVersion"]
    watch = await admin_b.watch(kinds.CONFIGMAPS, "default", resource_version=start)
    try:
        cm: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}}
        created = await admin_a.create(kinds.CONFIGMAPS, cm, "default")
        async with asyncio.timeout(TIMEOUT):
            event = await anext(aiter(watch))
    finally:
        await watch.close()
    assert (event.type, meta.name(event.object)) == ("ADDED", "shared")
    assert meta.resource_version(event.object) == meta.resource_version(created)
    seen = await wait_for(
        lambda: admin_b.get(kinds.CONFIGMAPS, "shared", "default"), what="the map on B"
    )
    assert meta.resource_version(seen) == meta.resource_version(created)


async def test_rbac_binding_through_one_replica_authorizes_on_the_other(
    replicas: list[HttpServer],
) -> None:
    a, b = replicas
    alice = b.client("alice")
    assert not await allowed(alice, kinds.CONFIGMAPS, "anything")
    binding: Obj = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "alice-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
    }
    await a.client().create(kinds.ROLE_BINDINGS, binding, "default")

    async def alice_reads() -> bool:
        try:
            await alice.get(kinds.CONFIGMAPS, "anything", "default")
        except errors.StatusError as err:
            return err.code == 404
        return True

    assert await wait_for(alice_reads, timeout=TIMEOUT, what="alice authorized on B")


async def test_node_access_to_a_claim_follows_a_pod_bound_through_the_other_replica(
    replicas: list[HttpServer],
) -> None:
    a, b = replicas
    admin_a = a.client()
    await admin_a.create(kinds.RESOURCE_CLAIMS, make_claim("gpu-claim").obj(), "default")
    pod = make_pod("worker").claim_ref("gpu", "gpu-claim").obj()
    await admin_a.create(kinds.PODS, pod, "default")
    node = node_client(b, "node-0")
    assert not await allowed(node, kinds.RESOURCE_CLAIMS, "gpu-claim")
    binding: Obj = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "worker", "namespace": "default"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-0"},
    }
    await admin_a.create(kinds.PODS, binding, "default", subresource="binding", name="worker")
    await wait_for(
        lambda: allowed(node, kinds.RESOURCE_CLAIMS, "gpu-claim"),
        timeout=TIMEOUT,
        what="node-0 may read the claim on B",
    )
    assert not await allowed(node_client(b, "node-1"), kinds.RESOURCE_CLAIMS, "gpu-claim")


async def test_a_client_of_both_replicas_fails_over_for_requests_and_watches(
    replicas: list[HttpServer],
) -> None:
    a, b = replicas
    base = load_kubeconfig(a.kubeconfig_path)
    client = RESTClient(base.with_servers(f"{a.url},{b.url}"))
    informer = Informer(client, kinds.CONFIGMAPS, namespace="default")
    task = asyncio.create_task(informer.run())
    try:
        assert client.server == a.url
        await informer.wait_synced()
        await a.server.stop()  # A goes away: its watch ends, new connections are refused
        cm: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after-a"}}
        created = await client.create(kinds.CONFIGMAPS, cm, "default")
        assert client.server == b.url
        seen = await wait_for(
            lambda: informer.lister.get("after-a", "default"),
            timeout=TIMEOUT,
            what="the informer's watch re-established on B",
        )
        assert meta.resource_version(seen) == meta.resource_version(created)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.close()


@pytest.mark.kubectl
async def test_kubectl_against_either_replica_sees_the_same_cluster(
    replicas: list[HttpServer], tmp_path: Path
) -> None:
    binary = kubectl_binary("1.29") or kubectl_binary("1.32") or kubectl_binary("1.27")
    if binary is None:
        pytest.skip("no versioned kubectl binary installed")
    a = replicas[0]
    cm: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen-by-both"}}
    created = await a.client().create(kinds.CONFIGMAPS, cm, "default")
    outputs = []
    for server in replicas:
        path = tmp_path / f"{server.server.port}.kubeconfig"
        path.write_text(
            dump_kubeconfig(kubeconfig_for_user(server.data_dir, ADMIN, server=server.url))
        )
        kubectl = Kubectl(binary, "1.29", path, tmp_path / f"cache-{server.server.port}")
        await wait_for(
            lambda server=server: server.registry.storage.get(
                kinds.CONFIGMAPS.key, "default", "seen-by-both"
            ),
            what="the map in the replica's store",
        )
        outputs.append(
            await kubectl.run(
                "get",
                "configmap",
                "seen-by-both",
                "-o",
                "jsonpath={.metadata.uid} {.metadata.resourceVersion}",
            )
        )
    assert outputs[0] == outputs[1] == f"{meta.uid(created)} {meta.resource_version(created)}"
