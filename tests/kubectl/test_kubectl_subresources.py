"""The real kubectl binaries: `--subresource=status` on get and patch, strategic merge patch of a
ResourceClaim, `replace` (a PUT of the whole object, as `kubectl edit` saves), and `delete
namespace` carried out end to end by the namespace controller; `exec` and `port-forward`
answered with why a simulated node serves none of them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from draplane.api import errors, kinds, versions
from draplane.controllers.manager import ControllerManager
from draplane.testing.apistate import seed_objects
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)


async def test_status_subresource_get_and_patch(kubectl: Kubectl, server: HttpServer) -> None:
    client = server.client()
    await client.create(kinds.PODS, make_pod("web").label("app", "web").obj())

    patched = await kubectl.run(
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "-p",
        '{"status":{"phase":"Running"},"metadata":{"labels":{"app":"ignored"}}}',
    )
    status = yaml.safe_load(
        await kubectl.run("get", "pod", "web", "--subresource=status", "-o", "yaml")
    )
    ignored = await kubectl.run(
        "patch", "pod", "web", "--type=merge", "-p", '{"status":{"phase":"Failed"}}'
    )

    assert patched.strip() == "pod/web patched"
    assert status["status"]["phase"] == "Running"
    assert ignored.strip() == "pod/web patched (no change)"
    stored = await client.get(kinds.PODS, "web", "default")
    assert stored["status"]["phase"] == "Running"
    assert stored["metadata"]["labels"] == {"app": "web"}


async def test_strategic_patch_and_replace_of_a_resource_claim(
    kubectl: Kubectl, server: HttpServer, tmp_path: Path
) -> None:
    client = server.client()
    await client.create(kinds.RESOURCE_CLAIMS, make_claim("gpu").label("a", "1").obj())

    patched = await kubectl.run(
        "patch", "resourceclaim", "gpu", "-p", '{"metadata":{"labels":{"b":"2"}}}'
    )
    current = yaml.safe_load(await kubectl.run("get", "resourceclaim", "gpu", "-o", "yaml"))
    current["metadata"]["annotations"] = {"edited": "yes"}
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(yaml.safe_dump(current))
    replaced = await kubectl.run("replace", "-f", str(manifest))
    stale = await kubectl.run("replace", "-f", str(manifest), check=False)

    assert patched.strip() == "resourceclaim.resource.k8s.io/gpu patched"
    assert replaced.strip() == "resourceclaim.resource.k8s.io/gpu replaced"
    assert "the object has been modified" in stale
    stored = await client.get(kinds.RESOURCE_CLAIMS, "gpu", "default")
    assert stored["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert stored["metadata"]["annotations"] == {"edited": "yes"}


async def test_delete_namespace_removes_its_content_then_the_namespace(
    kubectl: Kubectl, server: HttpServer
) -> None:
    client = server.client()
    await client.create(kinds.NAMESPACES, {"metadata": {"name": "team"}})
    await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "cfg"}}, "team")
    await client.create(kinds.RESOURCE_CLAIMS, make_claim("gpu", "team").obj())
    await client.create(kinds.PODS, make_pod("job", "team").obj())
    manager = ControllerManager(server.client(), mode=versions.CLASSIC)
    running = asyncio.create_task(manager.run())
    try:
        deleted = await kubectl.run("delete", "namespace", "team")
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)

    assert deleted.strip() == 'namespace "team" deleted'
    with pytest.raises(errors.StatusError) as err:
        await client.get(kinds.NAMESPACES, "team")
    assert err.value.code == 404
    for rt in (kinds.CONFIGMAPS, kinds.RESOURCE_CLAIMS, kinds.PODS):
        assert (await client.list(rt, "team"))["items"] == []


@pytest.mark.parametrize(
    ("args", "what"),
    [
        pytest.param(("exec", "web", "--", "true"), "exec (kubectl exec)", id="exec"),
        pytest.param(("port-forward", "pod/web", "0:80"), "port forwarding", id="port-forward"),
    ],
)
async def test_kubelet_commands_say_the_node_is_simulated(
    kubectl: Kubectl, server: HttpServer, args: tuple[str, ...], what: str
) -> None:
    await seed_objects(server.client(), make_pod("web").node("node-0").phase("Running").obj())

    output = await kubectl.run(*args, check=False)

    assert 'pod "web" runs on a simulated node, which serves no ' in output
    assert what in output
