"""kubectl against the served OpenAPI: `kubectl explain` of every served kind and of nested
fields, and validation left to the server (`--validate` strict, warn, false)."""

from __future__ import annotations

import asyncio

import pytest

from draplane.api import kinds
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)

_EXPLAINED = [rt for rt in kinds.SERVED if rt.version != "v1beta1"]


def _explain_args(rt: kinds.ResourceType) -> tuple[str, ...]:
    """`kubectl explain <resource>.<group>`; a resource core/v1 also has (events.k8s.io/v1
    Events) by --api-version, since kubectl before 1.30 matches `events` first and reads
    `.events.k8s.io` as field names."""
    if rt.group and kinds.lookup("", "v1", rt.resource) is not None:
        return (rt.resource, f"--api-version={rt.api_version}")
    return (f"{rt.resource}.{rt.group}" if rt.group else rt.resource,)


_NESTED = {
    "resourceclaims.spec": "resourceClassName",
    "pods.spec.containers.resources.claims": "name",
    "pods.spec.resourceClaims.source": "resourceClaimTemplateName",
    "nodes.status.nodeInfo": "kubeletVersion",
    "deployment.spec.template.spec.containers": "imagePullPolicy",
    "cronjob.spec.jobTemplate": "spec",
    "cronjob.spec.jobTemplate.spec": "backoffLimit",
    "secret.data": "map[string]",
    "statefulsets.spec.volumeClaimTemplates.spec": "storageClassName",
    "services.spec.ports": "targetPort",
    "endpointslices.endpoints.conditions": "terminating",
}
_CLAIM = """apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata:
  name: {name}
  namespace: default
spec:
  resourceClassNmae: typo
  resourceClassName: example
"""


async def test_explain_every_kind_and_nested_fields(kubectl: Kubectl, server: HttpServer) -> None:
    await kubectl.run("explain", "pods")  # fills the discovery and OpenAPI caches once
    # A few at a time: dozens of kubectl processes at once on two cores time out their TLS
    # handshakes.
    running = asyncio.Semaphore(4)

    async def explain(*what: str) -> str:
        async with running:
            return await kubectl.run("explain", *what)

    outputs = await asyncio.gather(
        *(explain(*_explain_args(rt)) for rt in _EXPLAINED),
        *(explain(path) for path in _NESTED),
    )
    for rt, output in zip(_EXPLAINED, outputs, strict=False):
        assert f"KIND:       {rt.kind}" in output or f"KIND:     {rt.kind}" in output, output
        assert "metadata" in output
    for (path, field), output in zip(_NESTED.items(), outputs[len(_EXPLAINED) :], strict=True):
        assert field in output, (path, output)


_APPLY_CASES = [
    # (--validate flags, stored, expected output)
    (
        (),
        False,
        'ResourceClaim in version "v1alpha2" cannot be handled as a ResourceClaim: '
        'strict decoding error: unknown field "spec.resourceClassNmae"',
    ),
    (("--validate=warn",), True, 'Warning: unknown field "spec.resourceClassNmae"'),
    (("--validate=false",), True, ""),
]


async def test_apply_leaves_validation_to_the_server(kubectl: Kubectl, server: HttpServer) -> None:
    """kubectl's default (strict) fails with the server's message, warn warns, false drops the
    field silently (one server per kubectl version for the three cases)."""
    for flags, stored, message in _APPLY_CASES:
        name = "typo-" + (flags[0].split("=")[1] if flags else "strict")
        output = await kubectl.run(
            "apply", *flags, "-f", "-", stdin=_CLAIM.format(name=name), check=False
        )
        listed = await server.client().list(kinds.RESOURCE_CLAIMS, "default")
        claims = {c["metadata"]["name"]: c for c in listed["items"]}
        assert message in output, (flags, output)
        if not stored:
            assert name not in claims
            assert "Error from server (BadRequest)" in output
            continue
        assert claims[name]["spec"] == {
            "resourceClassName": "example",
            "allocationMode": "WaitForFirstConsumer",
        }
        if not message:
            assert "unknown field" not in output
