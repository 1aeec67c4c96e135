"""Every field of the official `kubernetes` Python client's models (37.x, installed apart in
`<venv>/kubernetes-v37` by `make test`) for the kinds the 1.36 mode serves is in draplane's
1.36 schema, at every nesting level, and in the OpenAPI v3 documents draplane serves: strict
decoding knows it and `--validate=false` keeps it. The walk runs the client's `openapi_types`
and `attribute_map` (dumped by the client's own interpreter, since one process imports one
`kubernetes` package) against `schemas_for("1.36")`. A field deliberately not modelled is in
`ACCEPTED` with its reason; the test fails on any other gap and on an entry that is no longer
one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from draplane.api import versions
from draplane.api.schema import Arr, Map, Schemas, schemas_for
from draplane.api.schema.model import is_struct
from draplane.testing.httpserver import HttpServer, start_http_server

CLIENT_DIR = Path(
    os.environ.get("DRAPLANE_KUBERNETES_V37_CLIENT", Path(sys.prefix) / "kubernetes-v37")
)
DUMP = r"""
import inspect, json
from kubernetes import __version__
from kubernetes.client import models
out = {}
for name, cls in inspect.getmembers(models, inspect.isclass):
    if hasattr(cls, "openapi_types"):
        out[name] = {cls.attribute_map[a]: t for a, t in cls.openapi_types.items()}
print(json.dumps({"version": __version__, "models": out}))
"""

V1_37 = "Kubernetes 1.37 (client 37.x is release-1.37's API): not in the 1.36 API"
NOT_MODELLED = "not modelled: no draplane component reads or writes it"
LIST_ATTRIBUTES = (
    "DRAListTypeAttributes (alpha, off in 1.36): the allocator's CEL has no list-valued "
    "device attributes"
)
NODE_ALLOCATABLE = (
    "DRANodeAllocatableResources (alpha, off in 1.36): node-allocatable device capacity is "
    "not modelled"
)
CORE = "io.k8s.api.core.v1."
ACCEPTED: dict[str, str] = {
    # Kubernetes 1.36 fields draplane does not model (their features are outside what it
    # simulates; strict decoding refuses them as unknown).
    "io.k8s.api.apps.v1.DeploymentStatus.terminatingReplicas": NOT_MODELLED,
    "io.k8s.api.apps.v1.ReplicaSetStatus.terminatingReplicas": NOT_MODELLED,
    "io.k8s.api.batch.v1.JobSpec.successPolicy": NOT_MODELLED,
    "io.k8s.api.coordination.v1.LeaseSpec.preferredHolder": NOT_MODELLED,
    "io.k8s.api.coordination.v1.LeaseSpec.strategy": NOT_MODELLED,
    CORE + "Container.restartPolicyRules": NOT_MODELLED,
    CORE + "EphemeralContainer.restartPolicyRules": NOT_MODELLED,
    CORE + "EnvVarSource.fileKeyRef": NOT_MODELLED,
    CORE + "PodSpec.schedulingGroup": "GenericWorkload (alpha): no Workload API in draplane",
    CORE + "PodStatus.nodeAllocatableResourceClaimStatuses": NODE_ALLOCATABLE,
    CORE + "Volume.image": NOT_MODELLED,
    # PersistentVolumeClaim status is typed as in 1.28 (no volume binding, resizing or
    # attribute-class changes are simulated: docs/fidelity.md).
    CORE + "PersistentVolumeClaimStatus.currentVolumeAttributesClassName": NOT_MODELLED,
    CORE + "PersistentVolumeClaimStatus.modifyVolumeStatus": NOT_MODELLED,
    CORE + "PersistentVolumeClaimStatus.healthStatus": NOT_MODELLED,
    CORE + "VolumeProjection.clusterTrustBundle": NOT_MODELLED,
    CORE + "VolumeProjection.podCertificate": NOT_MODELLED,
    "io.k8s.api.discovery.v1.EndpointHints.forNodes": NOT_MODELLED,
    "io.k8s.api.storage.v1.CSIDriverSpec.preventPodSchedulingIfMissing": NOT_MODELLED,
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
    "CustomResourceDefinitionCondition.observedGeneration": NOT_MODELLED,
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
    "CustomResourceDefinitionStatus.observedGeneration": NOT_MODELLED,
    "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta.shardInfo": NOT_MODELLED,
    **{
        f"io.k8s.api.resource.{v}.DeviceAttribute.{name}": LIST_ATTRIBUTES
        for v in ("v1", "v1beta1", "v1beta2")
        for name in ("bools", "ints", "strings", "versions")
    },
    # Kubernetes 1.37 fields: the 1.36 mode must refuse them, as kube-apiserver 1.36 does.
    "io.k8s.api.batch.v1.JobSpec.scheduling": V1_37,
    CORE + "ConfigMapVolumeSource.defaultUser": V1_37,
    CORE + "DownwardAPIVolumeFile.user": V1_37,
    CORE + "DownwardAPIVolumeSource.defaultUser": V1_37,
    CORE + "EmptyDirVolumeSource.mode": V1_37,
    CORE + "GRPCAction.mode": V1_37,
    CORE + "HTTPGetAction.protocol": V1_37,
    CORE + "KeyToPath.user": V1_37,
    CORE + "NodeSpec.podPreemptionPolicy": V1_37,
    CORE + "NodeSystemInfo.runningInUserNamespace": V1_37,
    CORE + "PodSpec.evictionResponders": V1_37,
    CORE + "PodStatus.volumeHealth": V1_37,
    CORE + "ProjectedVolumeSource.defaultUser": V1_37,
    CORE + "SecretVolumeSource.defaultUser": V1_37,
    CORE + "ServiceAccountTokenProjection.user": V1_37,
    CORE + "VolumeMount.bindMountOptions": V1_37,
    "io.k8s.api.storage.v1.CSINode.status": V1_37,
    **{
        f"io.k8s.api.resource.{v}.{struct_field}": V1_37
        for v in ("v1", "v1beta1", "v1beta2")
        for struct_field in (
            "DeviceCounterConsumption.compatibilityGroups",
            "DeviceRequestAllocationResult.skipNodeOperations",
            "DeviceSubRequest.derivedAttributes",
            "ResourceSliceSpec.partitionTypeAttribute",
            "ResourceSliceSpec.skipNodeOperations",
            ("BasicDevice" if v == "v1beta1" else "Device") + ".nodeAllocatableResources",
            ("DeviceRequest" if v == "v1beta1" else "ExactDeviceRequest") + ".derivedAttributes",
        )
    },
}
"""draplane struct name + "." + JSON field -> why the 1.36 schema does not have it."""


@dataclass
class Walk:
    """What the walk saw: each draplane struct with the client's fields for it, and the gaps
    (struct.field -> the client's type)."""

    fields: dict[str, set[str]] = field(default_factory=dict)
    gaps: dict[str, str] = field(default_factory=dict)


def _client_class(models: dict[str, Any], group: str, version: str, kind: str) -> str | None:
    """The client's model of a kind: `V1Pod`, or group-prefixed where names clash
    (`CoreV1Event`, `ResourceV1ResourceClaim`)."""
    v = version[0].upper() + version[1:]
    prefix = (group.split(".")[0] or "core").capitalize()
    return next((n for n in (prefix + v + kind, v + kind) if n in models), None)


def _unwrap(client_type: str, ours: Any) -> tuple[str, Any]:
    """Strip matching list/map layers off the client's type and draplane's."""
    while True:
        if (m := re.fullmatch(r"(?i:list)\[(.*)\]", client_type)) and isinstance(ours, Arr):
            client_type, ours = m[1], ours.item
        elif (m := re.fullmatch(r"(?i:dict)[\[(]str, (.*)[\])]", client_type)) and isinstance(
            ours, Map
        ):
            client_type, ours = m[1], ours.value
        else:
            return client_type, ours


def walk(models: dict[str, Any], schemas: Schemas, mode: versions.Mode) -> Walk:
    out = Walk()
    seen: set[tuple[str, str]] = set()

    def visit(client: str, name: str) -> None:
        if (client, name) in seen:
            return
        seen.add((client, name))
        struct = schemas.get(name)
        if struct.preserve:  # a free-form subtree keeps every field
            return
        out.fields.setdefault(name, set()).update(models[client])
        for json_name, client_type in models[client].items():
            ours = struct.by_name.get(json_name)
            if ours is None:
                out.gaps[f"{name}.{json_name}"] = client_type
                continue
            leaf, our_leaf = _unwrap(client_type, ours.type)
            if leaf in models and is_struct(our_leaf):
                visit(leaf, our_leaf)
            elif leaf in models and our_leaf not in ("object", "json"):
                out.gaps[f"{name}.{json_name}"] = f"{client_type} (draplane: {ours.type})"

    for rt in mode.served:
        for kind in (rt.kind, rt.kind + "List"):
            ours = schemas.kind_struct(rt.group, rt.version, kind)
            client = _client_class(models, rt.group, rt.version, kind)
            if ours is not None and client is not None:
                visit(client, ours.name)
    return out


@pytest.fixture(scope="module")
def client_models() -> dict[str, Any]:
    if not (CLIENT_DIR / "kubernetes").is_dir():
        pytest.skip(f"the Kubernetes Python client 37.x is not installed in {CLIENT_DIR}")
    proc = subprocess.run(
        [sys.executable, "-c", DUMP],
        env={**os.environ, "PYTHONPATH": str(CLIENT_DIR)},
        capture_output=True,
        check=True,
        timeout=120,
    )
    dumped = json.loads(proc.stdout)
    assert dumped["version"].startswith("37."), dumped["version"]
    models: dict[str, Any] = dumped["models"]
    return models


@pytest.fixture(scope="module")
def client_walk(client_models: dict[str, Any]) -> Walk:
    return walk(client_models, schemas_for(versions.STRUCTURED.name), versions.STRUCTURED)


def test_the_walk_reaches_nested_dra_and_pod_structs(client_walk: Walk) -> None:
    # A walk that stopped at the top would find no gaps; these sit several levels down.
    for name in (
        CORE + "ResourceClaim",  # spec.containers[].resources.claims[]
        CORE + "SleepAction",  # spec.containers[].lifecycle.preStop.sleep
        CORE + "LinuxContainerUser",  # status.containerStatuses[].user.linux
        "io.k8s.api.resource.v1.DeviceSubRequest",  # spec.devices.requests[].firstAvailable[]
        "io.k8s.api.resource.v1.CapacityRequestPolicyRange",
        "io.k8s.api.resource.v1beta2.DeviceTaintSelector",
    ):
        assert name in client_walk.fields, name
    assert "request" in client_walk.fields[CORE + "ResourceClaim"]


def test_every_client_model_field_is_in_the_136_schema(client_walk: Walk) -> None:
    unexpected = {k: v for k, v in client_walk.gaps.items() if k not in ACCEPTED}
    assert unexpected == {}, "fields of the client's models missing from the 1.36 schema"


def test_every_accepted_gap_is_still_a_gap(client_walk: Walk) -> None:
    assert sorted(set(ACCEPTED) - set(client_walk.gaps)) == []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def structured(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("fields"), mode=versions.STRUCTURED)
    yield srv
    await srv.stop()


@pytest.mark.asyncio(loop_scope="module")
async def test_openapi_v3_lists_every_client_model_field(
    structured: HttpServer, client_walk: Walk
) -> None:
    missing: list[str] = []
    seen: set[str] = set()
    async with structured.session() as http:
        async with http.get("/openapi/v3") as resp:
            index = await resp.json()
        for entry in index["paths"].values():
            async with http.get(entry["serverRelativeURL"]) as resp:
                assert resp.status == 200
                components: dict[str, Any] = (await resp.json())["components"]["schemas"]
            for name, fields in client_walk.fields.items():
                found = components.get(name)
                if found is None or found.get("x-kubernetes-preserve-unknown-fields"):
                    continue
                seen.add(name)
                missing += [
                    f"{name}.{json_name}"
                    for json_name in fields
                    if json_name not in (found.get("properties") or {})
                    and f"{name}.{json_name}" not in ACCEPTED
                ]
    assert {CORE + "PodSpec", "io.k8s.api.resource.v1.DeviceRequest"} <= seen
    assert sorted(set(missing)) == []
