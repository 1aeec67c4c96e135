"""A fully populated object of each DRA kind and a Pod (spec, then status) written to the 1.36
API server with `fieldValidation=Strict` comes back unchanged: every field it sets is known to
strict decoding and kept by storage (what `kubectl --validate=false` and the Python client
send). The schema side of completeness is `test_client_model_fields`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from draplane.api import versions
from draplane.api.meta import Obj
from draplane.testing.httpserver import HttpServer, start_http_server

pytestmark = pytest.mark.asyncio(loop_scope="module")
RESOURCE = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.example.com"
STRICT = {"fieldValidation": "Strict"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def structured(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("roundtrip"), mode=versions.STRUCTURED)
    yield srv
    await srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(structured: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with structured.session() as session:
        yield session


def _md(name: str, namespaced: bool = True) -> Obj:
    md: Obj = {"name": name, "labels": {"app": "demo"}, "annotations": {"note": "full"}}
    return {**md, "namespace": "default"} if namespaced else md


SELECTORS = [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]
TOLERATIONS = [
    {"key": "maintenance", "operator": "Equal", "value": "soon", "effect": "NoSchedule"},
    {"key": "broken", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
]
CONFIG = {"opaque": {"driver": DRIVER, "parameters": {"sharing": {"strategy": "TimeSlicing"}}}}
CLAIM_SPEC: Obj = {
    "devices": {
        "requests": [
            {
                "name": "big",
                "exactly": {
                    "deviceClassName": "gpu",
                    "selectors": SELECTORS,
                    "allocationMode": "ExactCount",
                    "count": 2,
                    "tolerations": TOLERATIONS,
                    "capacity": {"requests": {"memory": "8Gi"}},
                },
            },
            {
                "name": "any",
                "firstAvailable": [
                    {
                        "name": "fast",
                        "deviceClassName": "gpu",
                        "selectors": SELECTORS,
                        "allocationMode": "ExactCount",
                        "count": 1,
                        "tolerations": TOLERATIONS[:1],
                        "capacity": {"requests": {"memory": "1Gi"}},
                    },
                    {"name": "slow", "deviceClassName": "gpu", "allocationMode": "All"},
                ],
            },
        ],
        "constraints": [
            {"requests": ["big", "any"], "matchAttribute": f"{DRIVER}/model"},
            {"requests": ["big"], "distinctAttribute": f"{DRIVER}/uuid"},
        ],
        "config": [{"requests": ["big"], **CONFIG}],
    }
}
DEVICE: Obj = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "a100"},
        "cores": {"int": 108},
        "mig": {"bool": True},
        "driverVersion": {"version": "1.2.3"},
    },
    "capacity": {
        "memory": {
            "value": "40Gi",
            "requestPolicy": {
                "default": "1Gi",
                "validRange": {"min": "1Gi", "max": "40Gi", "step": "1Gi"},
            },
        },
        "cores": {"value": "108", "requestPolicy": {"validValues": ["54", "108"]}},
    },
    "consumesCounters": [{"counterSet": "gpu-0-set", "counters": {"memory": {"value": "40Gi"}}}],
    "taints": [{"key": "maintenance", "value": "soon", "effect": "NoSchedule"}],
    "bindsToNode": True,
    "bindingConditions": ["dra.example.com/attached"],
    "bindingFailureConditions": ["dra.example.com/failed"],
    "allowMultipleAllocations": True,
}
OBJECTS: list[Any] = [
    pytest.param(
        f"{RESOURCE}/deviceclasses",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": _md("gpu", namespaced=False),
            "spec": {
                "selectors": SELECTORS,
                "config": [CONFIG],
                "extendedResourceName": "example.com/gpu",
            },
        },
        id="DeviceClass",
    ),
    pytest.param(
        f"{RESOURCE}/namespaces/default/resourceclaims",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": _md("claim"),
            "spec": CLAIM_SPEC,
        },
        id="ResourceClaim",
    ),
    pytest.param(
        f"{RESOURCE}/namespaces/default/resourceclaimtemplates",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": _md("template"),
            "spec": {"metadata": {"labels": {"from": "template"}}, "spec": CLAIM_SPEC},
        },
        id="ResourceClaimTemplate",
    ),
    pytest.param(
        f"{RESOURCE}/resourceslices",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": _md("node-0-gpus", namespaced=False),
            "spec": {
                "driver": DRIVER,
                "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 2},
                "nodeName": "node-0",
                "devices": [DEVICE],
            },
        },
        id="ResourceSlice",
    ),
    pytest.param(
        f"{RESOURCE}/resourceslices",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": _md("node-0-counters", namespaced=False),
            "spec": {
                "driver": DRIVER,
                "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 2},
                "nodeName": "node-0",
                "sharedCounters": [
                    {"name": "gpu-0-set", "counters": {"memory": {"value": "40Gi"}}}
                ],
            },
        },
        id="ResourceSlice-counters",
    ),
    pytest.param(
        "/apis/resource.k8s.io/v1beta2/devicetaintrules",
        {
            "apiVersion": "resource.k8s.io/v1beta2",
            "kind": "DeviceTaintRule",
            "metadata": _md("maintenance", namespaced=False),
            "spec": {
                "deviceSelector": {"driver": DRIVER, "pool": "node-0", "device": "gpu-0"},
                "taint": {"key": "maintenance", "value": "soon", "effect": "NoExecute"},
            },
        },
        id="DeviceTaintRule",
    ),
]


def missing(sent: Any, got: Any, path: str = "") -> list[str]:
    """Where `got` lacks or changed what `sent` has (lists item by item; `got` may add
    defaulted fields)."""
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [path]
        return [p for k, v in sent.items() for p in missing(v, got.get(k), f"{path}.{k}")]
    if isinstance(sent, list):
        if not isinstance(got, list) or len(got) != len(sent):
            return [path]
        return [
            p
            for i, (s, g) in enumerate(zip(sent, got, strict=True))
            for p in missing(s, g, f"{path}[{i}]")
        ]
    return [] if sent == got else [f"{path}: {sent!r} -> {got!r}"]


async def _write(http: aiohttp.ClientSession, method: str, path: str, obj: Obj) -> Obj:
    async with http.request(method, path, json=obj, params=STRICT) as resp:
        body: Obj = await resp.json()
        assert resp.status in (200, 201), body
        return body


@pytest.mark.parametrize(("path", "obj"), OBJECTS)
async def test_a_full_dra_object_round_trips_under_strict(
    http: aiohttp.ClientSession, path: str, obj: Obj
) -> None:
    created = await _write(http, "POST", path, obj)
    async with http.get(f"{path}/{obj['metadata']['name']}") as resp:
        stored = await resp.json()
    assert missing(obj, created) == []
    assert missing(obj, stored) == []


SLEEP = {"sleep": {"seconds": 5}}
POD: Obj = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": _md("web"),
    "spec": {
        "os": {"name": "linux"},
        "hostnameOverride": "web-host",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2"}},
        "securityContext": {
            "supplementalGroupsPolicy": "Strict",
            "seLinuxChangePolicy": "Recursive",
        },
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"tier": "web"}},
                        "topologyKey": "kubernetes.io/hostname",
                        "matchLabelKeys": ["app"],
                        "mismatchLabelKeys": ["team"],
                    }
                ]
            }
        },
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim"}],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "containers": [
            {
                "name": "app",
                "image": "busybox:1.36",
                "resources": {"claims": [{"name": "gpu", "request": "big"}]},
                "lifecycle": {"postStart": SLEEP, "preStop": SLEEP, "stopSignal": "SIGUSR1"},
                "volumeMounts": [
                    {
                        "name": "data",
                        "mountPath": "/data",
                        "readOnly": True,
                        "recursiveReadOnly": "IfPossible",
                    }
                ],
            }
        ],
    },
}
RESOURCES = {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
POD_STATUS: Obj = {
    "observedGeneration": 1,
    "phase": "Running",
    "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}],
    "allocatedResources": {"cpu": "1"},
    "resources": RESOURCES,
    "containerStatuses": [
        {
            "name": "app",
            "image": "busybox:1.36",
            "imageID": "busybox@sha256:0",
            "containerID": "containerd://app",
            "ready": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}},
            "allocatedResources": {"cpu": "1"},
            "resources": RESOURCES,
            "volumeMounts": [
                {
                    "name": "data",
                    "mountPath": "/data",
                    "readOnly": True,
                    "recursiveReadOnly": "Enabled",
                }
            ],
            "user": {"linux": {"uid": 1000, "gid": 1000, "supplementalGroups": [4, 5]}},
            "allocatedResourcesStatus": [
                {
                    "name": "claim:gpu/big",
                    "resources": [
                        {
                            "resourceID": f"{DRIVER}/node-0/gpu-0",
                            "health": "Unhealthy",
                            "message": "ECC errors",
                        }
                    ],
                }
            ],
            "stopSignal": "SIGUSR1",
        }
    ],
}


async def test_a_full_pod_round_trips_under_strict(http: aiohttp.ClientSession) -> None:
    pods = "/api/v1/namespaces/default/pods"
    created = await _write(http, "POST", pods, POD)
    assert missing(POD, created) == []

    updated = await _write(http, "PUT", f"{pods}/web/status", {**created, "status": POD_STATUS})
    async with http.get(f"{pods}/web") as resp:
        stored = await resp.json()
    assert missing(POD_STATUS, updated["status"]) == []
    assert missing({**POD, "status": POD_STATUS}, stored) == []


def _strict_pod(ref: Obj, pod_claim: Obj) -> Obj:
    container = {"name": "app", "image": "busybox:1.36", "resources": {"claims": [ref]}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _md("strict"),
        "spec": {"resourceClaims": [pod_claim], "containers": [container]},
    }


async def test_strict_refuses_a_field_the_version_does_not_have(
    http: aiohttp.ClientSession, tmp_path: Any
) -> None:
    path = "/api/v1/namespaces/default/pods"
    unknown = 'unknown field "spec.containers[0].resources.claims[0].{}"'
    misspelled = _strict_pod(
        {"name": "gpu", "requst": "big"}, {"name": "gpu", "resourceClaimName": "claim"}
    )
    async with http.post(path, json=misspelled, params=STRICT) as resp:
        assert resp.status == 400
        assert unknown.format("requst") in (await resp.json())["message"]

    classic = await start_http_server(tmp_path / "classic", mode=versions.CLASSIC)
    try:
        async with classic.session() as session:
            body = _strict_pod(  # 1.28: the claim under `source`, no `request`
                {"name": "gpu", "request": "big"},
                {"name": "gpu", "source": {"resourceClaimName": "claim"}},
            )
            async with session.post(path, json=body, params=STRICT) as resp:
                assert resp.status == 400, await resp.text()
                assert unknown.format("request") in (await resp.json())["message"]
    finally:
        await classic.stop()


async def test_an_access_review_with_selectors_is_answered_under_strict(
    http: aiohttp.ClientSession,
) -> None:
    attributes = {
        "namespace": "default",
        "verb": "list",
        "resource": "pods",
        "labelSelector": {"requirements": [{"key": "app", "operator": "In", "values": ["demo"]}]},
        "fieldSelector": {"rawSelector": "spec.nodeName=node-0"},
    }
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    answered = await _write(http, "POST", path, review)
    assert missing(review["spec"], answered["spec"]) == []
    assert answered["status"]["allowed"] is True
