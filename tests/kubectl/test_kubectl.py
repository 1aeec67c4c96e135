"""The real kubectl 1.27 / 1.29 / 1.32 binaries against the HTTPS API server in this test's loop.

Each kubectl runs as a subprocess (asyncio, so the server keeps serving) with its own discovery
cache dir and `--kubeconfig DIR/kubeconfig`. Covers get (table, wide, yaml, watch), apply
(client-side and server-side), create, patch, label, delete, describe, and the protobuf bodies
of kubectl 1.32's `create namespace` / `create configmap`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from draplane.api import errors, kinds
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)


def _rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


async def test_get_table_wide_and_yaml(kubectl: Kubectl, server: HttpServer) -> None:
    client = server.client()
    created = await client.create(kinds.PODS, make_pod("web").label("app", "web").obj())
    await client.update(
        kinds.PODS,
        {
            **created,
            "spec": {**created["spec"], "nodeName": "node-0"},
            "status": {"phase": "Running"},
        },
        subresource="status",
    )
    await client.create(kinds.RESOURCE_CLAIMS, make_claim("gpu").obj())

    table = _rows(await kubectl.run("get", "pods"))
    wide = await kubectl.run("get", "pods", "-o", "wide", "--show-labels")
    claims = _rows(await kubectl.run("get", "resourceclaims"))
    as_yaml = yaml.safe_load(await kubectl.run("get", "pod", "web", "-o", "yaml"))
    all_ns = _rows(await kubectl.run("get", "pods", "-A"))

    assert table[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert table[1][:4] == ["web", "0/1", "Running", "0"]
    assert "NOMINATED NODE" in wide and "app=web" in wide.splitlines()[1]
    assert claims[0] == ["NAME", "RESOURCECLASSNAME", "ALLOCATIONMODE", "STATE", "AGE"]
    assert claims[1][:4] == ["gpu", "example", "WaitForFirstConsumer", "pending"]
    assert (as_yaml["kind"], as_yaml["metadata"]["uid"]) == ("Pod", created["metadata"]["uid"])
    assert all_ns[1][:2] == ["default", "web"]


async def test_get_watch_prints_new_rows(kubectl: Kubectl, server: HttpServer) -> None:
    client = server.client()
    await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "first", "namespace": "default"}})
    proc = await kubectl.start("get", "configmaps", "-w")
    assert proc.stdout is not None
    try:
        seen = await _read_until(proc.stdout, "first")
        await client.create(
            kinds.CONFIGMAPS,
            {"metadata": {"name": "second", "namespace": "default"}, "data": {"a": "b"}},
        )
        seen += await _read_until(proc.stdout, "second")
    finally:
        proc.terminate()
        await proc.wait()

    rows = _rows(seen)
    assert rows[0] == ["NAME", "DATA", "AGE"]
    assert ["second", "1"] in [r[:2] for r in rows]


async def _read_until(stream: asyncio.StreamReader, word: str) -> str:
    text = ""
    while word not in text:
        line = await asyncio.wait_for(stream.readline(), timeout=15)
        if not line:
            raise AssertionError(f"kubectl output ended before {word!r}: {text}")
        text += line.decode()
    return text


_CLAIM_MANIFEST = """
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata:
  name: applied
  labels: {stage: one}
spec:
  resourceClassName: example
"""


async def test_client_side_apply_create_then_configure(
    kubectl: Kubectl, server: HttpServer, tmp_path: Path
) -> None:
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(_CLAIM_MANIFEST)

    first = await kubectl.run("apply", "-f", str(manifest))
    manifest.write_text(_CLAIM_MANIFEST.replace("stage: one", "stage: two"))
    second = await kubectl.run("apply", "-f", str(manifest))
    unchanged = await kubectl.run("apply", "-f", str(manifest))

    assert first.strip() == "resourceclaim.resource.k8s.io/applied created"
    assert second.strip() == "resourceclaim.resource.k8s.io/applied configured"
    assert unchanged.strip() == "resourceclaim.resource.k8s.io/applied unchanged"
    claim = await server.client().get(kinds.RESOURCE_CLAIMS, "applied", "default")
    assert claim["metadata"]["labels"] == {"stage": "two"}
    assert claim["spec"]["allocationMode"] == "WaitForFirstConsumer"


async def test_server_side_apply(kubectl: Kubectl, server: HttpServer, tmp_path: Path) -> None:
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(_CLAIM_MANIFEST)

    first = await kubectl.run("apply", "--server-side", "-f", str(manifest))
    manifest.write_text(_CLAIM_MANIFEST.replace("stage: one", "stage: two"))
    second = await kubectl.run("apply", "--server-side", "-f", str(manifest))

    assert first.strip() == "resourceclaim.resource.k8s.io/applied serverside-applied"
    assert second.strip() == "resourceclaim.resource.k8s.io/applied serverside-applied"
    claim = await server.client().get(kinds.RESOURCE_CLAIMS, "applied", "default")
    assert claim["metadata"]["labels"] == {"stage": "two"}


async def test_create_patch_label_delete(kubectl: Kubectl, server: HttpServer) -> None:
    pod = yaml.safe_dump(make_pod("edit").obj())

    created = await kubectl.run("create", "-f", "-", stdin=pod)
    strategic = await kubectl.run(
        "patch", "pod", "edit", "-p", '{"spec":{"containers":[{"name":"ctr","image":"busybox"}]}}'
    )
    merged = await kubectl.run(
        "patch", "pod", "edit", "--type=merge", "-p", '{"metadata":{"annotations":{"a":"b"}}}'
    )
    labelled = await kubectl.run("label", "pod", "edit", "tier=db")
    duplicate = await kubectl.run("create", "-f", "-", stdin=pod, check=False)

    assert created.strip() == "pod/edit created"
    assert strategic.strip() == "pod/edit patched"
    assert merged.strip() == "pod/edit patched"
    assert labelled.strip() == "pod/edit labeled"
    assert 'pods "edit" already exists' in duplicate
    stored = await server.client().get(kinds.PODS, "edit", "default")
    assert stored["spec"]["containers"][0]["image"] == "busybox"
    assert stored["metadata"]["annotations"]["a"] == "b"
    assert stored["metadata"]["labels"]["tier"] == "db"

    await server.client().create(kinds.RESOURCE_CLAIMS, make_claim("gone").obj())
    deleted = await kubectl.run("delete", "resourceclaim", "gone")
    assert deleted.strip() == 'resourceclaim.resource.k8s.io "gone" deleted'
    with pytest.raises(errors.StatusError):
        await server.client().get(kinds.RESOURCE_CLAIMS, "gone", "default")


async def test_describe_pod_and_resource_claim(kubectl: Kubectl, server: HttpServer) -> None:
    client = server.client()
    pod = await client.create(kinds.PODS, make_pod("d").obj())
    await client.create(
        kinds.EVENTS,
        {
            "metadata": {"name": "d.1", "namespace": "default"},
            "involvedObject": {
                "kind": "Pod",
                "name": "d",
                "namespace": "default",
                "uid": pod["metadata"]["uid"],
                "apiVersion": "v1",
            },
            "reason": "ClaimsPrepared",
            "message": "claim gpu prepared",
            "type": "Normal",
            "firstTimestamp": pod["metadata"]["creationTimestamp"],
            "lastTimestamp": pod["metadata"]["creationTimestamp"],
            "count": 1,
            "source": {"component": "kubelet"},
        },
    )
    await client.create(kinds.RESOURCE_CLAIMS, make_claim("gpu").obj())

    pod_text = await kubectl.run("describe", "pod", "d")
    claim_text = await kubectl.run("describe", "resourceclaims.v1alpha2.resource.k8s.io", "gpu")

    assert "Name:" in pod_text and "default" in pod_text
    assert "ClaimsPrepared" in pod_text and "claim gpu prepared" in pod_text
    assert "Name:" in claim_text and "gpu" in claim_text
    assert "Resource Class Name:  example" in claim_text


async def test_create_namespace_and_configmap(kubectl: Kubectl, server: HttpServer) -> None:
    ns = await kubectl.run("create", "namespace", f"team-{kubectl.version.replace('.', '-')}")
    cm = await kubectl.run("create", "configmap", "settings", "--from-literal=mode=fast")

    assert ns.strip().startswith("namespace/team-") and ns.strip().endswith(" created")
    assert cm.strip() == "configmap/settings created"
    stored = await server.client().get(kinds.CONFIGMAPS, "settings", "default")
    assert stored["data"] == {"mode": "fast"}
