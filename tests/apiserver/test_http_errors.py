"""Status errors over HTTPS exactly as api-surface §1.7 lists them (messages, details, causes),
and no partial writes: every rejected write leaves the store's revision where it was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.httpserver import HttpServer

CM = "/api/v1/namespaces/default/configmaps"
CLAIMS = "/apis/resource.k8s.io/v1alpha2/namespaces/default/resourceclaims"
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
async def server(server: HttpServer) -> HttpServer:
    client = server.client()
    await client.create(
        kinds.CONFIGMAPS, {"metadata": {"name": "cm"}, "data": {"k": "v"}}, "default"
    )
    await client.create(kinds.RESOURCE_CLAIMS, make_claim("claim").obj())
    await client.create(kinds.PODS, make_pod("pod").obj())
    return server


@dataclass(frozen=True)
class Bad:
    method: str
    path: str
    body: bytes
    content_type: str
    code: int
    reason: str
    message: str = ""


def _json(obj: Any) -> bytes:
    return orjson.dumps(obj)


MERGE = "application/merge-patch+json"
STALE_CM = {"metadata": {"name": "cm", "resourceVersion": "1"}, "data": {"k": "x"}}


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(
            Bad("POST", CM, b'{"metadata": {', "application/json", 400, "BadRequest"), id="bad-json"
        ),
        pytest.param(
            Bad("POST", CM, b"metadata: [", "application/yaml", 400, "BadRequest"), id="bad-yaml"
        ),
        pytest.param(Bad("POST", CM, b"x", "text/plain", 415, "UnsupportedMediaType"), id="415"),
        pytest.param(
            Bad(
                "POST",
                CM,
                _json({"metadata": {"name": "big"}, "data": {"k": "x" * (3 * 1024 * 1024)}}),
                "application/json",
                413,
                "RequestEntityTooLarge",
                "Request entity too large: limit is 3145728",
            ),
            id="413",
        ),
        pytest.param(
            Bad(
                "PUT",
                CM,
                _json({"metadata": {"name": "cm"}}),
                "application/json",
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            ),
            id="put-on-collection",
        ),
        pytest.param(
            Bad(
                "POST",
                CM,
                _json({"metadata": {"name": "cm"}}),
                "application/json",
                409,
                "AlreadyExists",
                'configmaps "cm" already exists',
            ),
            id="already-exists",
        ),
        pytest.param(
            Bad(
                "PUT",
                f"{CM}/cm",
                _json(STALE_CM),
                "application/json",
                409,
                "Conflict",
                'Operation cannot be fulfilled on configmaps "cm": the object has been modified; '
                "please apply your changes to the latest version and try again",
            ),
            id="conflict",
        ),
        pytest.param(
            Bad(
                "PATCH",
                f"{CM}/cm",
                _json([{"op": "test", "path": "/data/k", "value": "no"}]),
                "application/json-patch+json",
                422,
                "Invalid",
            ),
            id="json-patch-test-failure",
        ),
        pytest.param(
            Bad(
                "POST",
                PODS,
                _json(
                    make_pod("debugged")
                    .set("spec.ephemeralContainers", [{"name": "debug", "image": "busybox:1"}])
                    .obj()
                ),
                "application/json",
                422,
                "Invalid",
                'Pod "debugged" is invalid: spec.ephemeralContainers: Forbidden: '
                "cannot be set on create",
            ),
            id="ephemeral-containers-on-create",
        ),
        pytest.param(
            Bad("PATCH", f"{CM}/cm", b'{"data": 1}', "text/plain", 415, "UnsupportedMediaType"),
            id="patch-415",
        ),
        pytest.param(
            Bad(
                "PATCH",
                f"{CLAIMS}/claim",
                _json({"spec": {"resourceClassName": "Not Valid"}}),
                MERGE,
                422,
                "Invalid",
            ),
            id="patch-makes-invalid-object",
        ),
        pytest.param(
            Bad(
                "PATCH",
                f"{CM}/cm",
                _json({"metadata": {"name": "other"}}),
                MERGE,
                400,
                "BadRequest",
            ),
            id="patch-renames",
        ),
        pytest.param(
            Bad(
                "POST",
                "/api/v1/namespaces/default/pods",
                _json(
                    {"metadata": {"name": "p2", "namespace": "other"}, "spec": {"containers": []}}
                ),
                "application/json",
                400,
                "BadRequest",
            ),
            id="namespace-mismatch",
        ),
        pytest.param(
            Bad(
                "DELETE",
                f"{CM}/cm",
                _json({"propagationPolicy": "Sideways"}),
                "application/json",
                422,
                "Invalid",
            ),
            id="bad-propagation-policy",
        ),
        pytest.param(
            Bad(
                "DELETE",
                f"{CM}/cm",
                _json({"preconditions": {"uid": "other"}}),
                "application/json",
                409,
                "Conflict",
            ),
            id="delete-precondition",
        ),
        pytest.param(
            Bad(
                "POST",
                "/api/v1/namespaces/default/pods/pod/binding",
                _json({"metadata": {"name": "pod"}, "target": {"kind": "Node"}}),
                "application/json",
                422,
                "Invalid",
            ),
            id="binding-without-node",
        ),
        pytest.param(
            Bad(
                "PUT",
                "/api/v1/namespaces/default/pods/pod/status",
                b"[]",
                "application/json",
                400,
                "BadRequest",
            ),
            id="status-body-not-object",
        ),
    ],
)
async def test_rejected_writes_change_nothing(
    server: HttpServer, http: aiohttp.ClientSession, bad: Bad
) -> None:
    revision = server.storage.revision
    before = await server.client().list(kinds.CONFIGMAPS, "default")

    async with http.request(
        bad.method, bad.path, data=bad.body, headers={"Content-Type": bad.content_type}
    ) as resp:
        body = orjson.loads(await resp.read())

    assert (resp.status, body["code"], body["reason"]) == (bad.code, bad.code, bad.reason)
    assert (body["kind"], body["apiVersion"], body["status"]) == ("Status", "v1", "Failure")
    if bad.message:
        assert body["message"] == bad.message
    assert server.storage.revision == revision
    assert await server.client().list(kinds.CONFIGMAPS, "default") == before


@pytest.mark.parametrize(
    ("path", "details"),
    [
        pytest.param(f"{CM}/nope", {"name": "nope", "kind": "configmaps"}, id="core"),
        pytest.param(
            f"{CLAIMS}/nope",
            {"name": "nope", "group": "resource.k8s.io", "kind": "resourceclaims"},
            id="resource-group",
        ),
    ],
)
async def test_not_found_names_the_resource(
    http: aiohttp.ClientSession, path: str, details: dict[str, str]
) -> None:
    async with http.get(path) as resp:
        body = orjson.loads(await resp.read())

    group = details.get("group")
    resource = f"{details['kind']}.{group}" if group else details["kind"]
    assert (resp.status, body["reason"]) == (404, "NotFound")
    assert body["message"] == f'{resource} "nope" not found'
    assert body["details"] == details


async def test_invalid_lists_every_cause_with_its_field(http: aiohttp.ClientSession) -> None:
    claim = make_claim("Bad_Name").obj()
    claim["spec"] = {"allocationMode": "Sometimes"}

    async with http.post(CLAIMS, json=claim) as resp:
        body = orjson.loads(await resp.read())

    assert (resp.status, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith('ResourceClaim.resource.k8s.io "Bad_Name" is invalid: [')
    assert body["details"]["name"] == "Bad_Name"
    assert (body["details"]["group"], body["details"]["kind"]) == (
        "resource.k8s.io",
        "ResourceClaim",
    )
    causes = {c["field"]: c for c in body["details"]["causes"]}
    assert set(causes) == {"metadata.name", "spec.resourceClassName", "spec.allocationMode"}
    assert causes["spec.resourceClassName"]["reason"] == "FieldValueInvalid"
    assert causes["spec.allocationMode"] == {
        "reason": "FieldValueNotSupported",
        "message": 'Unsupported value: "Sometimes": supported values: "Immediate", '
        '"WaitForFirstConsumer"',
        "field": "spec.allocationMode",
    }


@pytest.mark.parametrize(
    ("method", "tail", "what"),
    [
        pytest.param("POST", "exec?command=sh&stdin=true", "exec (kubectl exec)", id="exec"),
        pytest.param("POST", "attach", "attach (kubectl attach)", id="attach"),
        pytest.param("POST", "portforward?ports=80", "port forwarding", id="portforward"),
        pytest.param("GET", "proxy/healthz", "proxying to the pod", id="proxy"),
    ],
)
async def test_kubelet_subresources_of_a_simulated_pod_are_a_clear_400(
    http: aiohttp.ClientSession, method: str, tail: str, what: str
) -> None:
    async with http.request(method, f"/api/v1/namespaces/default/pods/pod/{tail}") as resp:
        body = orjson.loads(await resp.read())

    assert (resp.status, body["kind"], body["reason"], body["code"]) == (
        400,
        "Status",
        "BadRequest",
        400,
    )
    assert body["message"].startswith('pod "pod" runs on a simulated node, which serves no ')
    assert what in body["message"]
