"""fieldValidation over HTTP: unknown and duplicate fields of every write verb under Strict
(400 with upstream's message), Warn (the default: dropped, one Warning header each) and Ignore
(dropped silently)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from draplane.api import kinds
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.httpserver import HttpServer, start_http_server

pytestmark = pytest.mark.asyncio(loop_scope="module")
_names = itertools.count()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    """One server for the module: each test writes objects of its own name."""
    srv = await start_http_server(tmp_path_factory.mktemp("fieldvalidation"))
    yield srv
    await srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with server.session() as session:
        yield session


def _renamed(body: bytes) -> tuple[bytes, str]:
    """`body` with its object named uniquely (the byte form keeps repeated keys)."""
    name = f"o{next(_names)}"
    return body.replace(b'"name": "c"', f'"name": "{name}"'.encode(), 1), name


CLAIMS = "/apis/resource.k8s.io/v1alpha2/namespaces/default/resourceclaims"
PODS = "/api/v1/namespaces/default/pods"
CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
JSON_PATCH = "application/json-patch+json"
CLAIM_STRICT = (
    'ResourceClaim in version "v1alpha2" cannot be handled as a ResourceClaim: '
    "strict decoding error: "
)


def _dumps(obj: Any) -> bytes:
    return orjson.dumps(obj).replace(b'"name":"c"', b'"name": "c"', 1)


def _pod_volume(volume: dict[str, Any]) -> dict[str, Any]:
    pod = make_pod("c").obj()
    pod["spec"]["volumes"] = [{"name": "v", **volume}]
    return pod


async def _send(
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    body: bytes,
    *,
    mode: str | None,
    content_type: str = "application/json",
) -> tuple[int, Any, list[str]]:
    params = {"fieldValidation": mode} if mode is not None else {}
    async with http.request(
        method, path, data=body, params=params, headers={"Content-Type": content_type}
    ) as resp:
        return resp.status, await resp.json(), resp.headers.getall("Warning", [])


@pytest.mark.parametrize(
    ("path", "body", "problems", "dropped"),
    [
        pytest.param(
            CLAIMS,
            _dumps(make_claim("c").set("spec.resourceClassNmae", "x").obj()),
            ['unknown field "spec.resourceClassNmae"'],
            ("spec", "resourceClassNmae"),
            id="nested",
        ),
        pytest.param(
            CM,
            _dumps({"metadata": {"name": "c"}, "dta": {"a": "b"}}),
            ['unknown field "dta"'],
            ("dta",),
            id="top-level",
        ),
        pytest.param(
            PODS,
            _dumps(make_pod("c").container_fields(imagePullPolcy="Never").obj()),
            ['unknown field "spec.containers[0].imagePullPolcy"'],
            ("spec", "containers", 0, "imagePullPolcy"),
            id="list-item",
        ),
        pytest.param(
            PODS,
            _dumps(
                make_pod("c")
                .container_fields(resources={"limits": {"cpu": "1"}, "claimz": []})
                .obj()
            ),
            ['unknown field "spec.containers[0].resources.claimz"'],
            ("spec", "containers", 0, "resources", "claimz"),
            id="in-a-struct-with-map-values",
        ),
        pytest.param(
            PODS,
            _dumps(_pod_volume({"configMap": {"name": "cm", "itmes": []}})),
            ['unknown field "spec.volumes[0].configMap.itmes"'],
            ("spec", "volumes", 0, "configMap", "itmes"),
            id="in-a-volume-source",
        ),
        pytest.param(
            PODS,
            _dumps(_pod_volume({"iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0, "lnu": 1}})),
            ['unknown field "spec.volumes[0].iscsi.lnu"'],
            ("spec", "volumes", 0, "iscsi", "lnu"),
            id="in-an-in-tree-volume-source",
        ),
        pytest.param(
            CLAIMS,
            b'{"metadata": {"name": "c"}, "spec": {"resourceClassName": "a", '
            b'"resourceClassName": "b"}}',
            ['duplicate field "spec.resourceClassName"'],
            None,
            id="duplicate",
        ),
        pytest.param(
            CLAIMS,
            b'{"metadata": {"name": "c"}, "spec": {"resourceClassName": "a", "x": 1, '
            b'"resourceClassName": "b"}}',
            ['unknown field "spec.x"', 'duplicate field "spec.resourceClassName"'],
            ("spec", "x"),
            id="unknown-and-duplicate",
        ),
    ],
)
@pytest.mark.parametrize("mode", ["Strict", "Warn", None, "Ignore"])
async def test_create(
    http: aiohttp.ClientSession,
    path: str,
    body: bytes,
    problems: list[str],
    dropped: tuple[Any, ...] | None,
    mode: str | None,
) -> None:
    body, _ = _renamed(body)
    code, result, warned = await _send(http, "POST", path, body, mode=mode)
    if mode == "Strict":
        assert code == 400
        assert result["reason"] == "BadRequest"
        assert result["message"].endswith("strict decoding error: " + ", ".join(problems))
        assert warned == []
        return
    assert code == 201, result
    expected = [f'299 - "{p.replace(chr(34), chr(92) + chr(34))}"' for p in problems]
    assert warned == (expected if mode != "Ignore" else [])
    if dropped is not None:
        node: Any = result
        for key in dropped[:-1]:
            node = node[key]
        assert dropped[-1] not in node


async def test_strict_message_is_upstreams(http: aiohttp.ClientSession) -> None:
    code, result, _ = await _send(
        http,
        "POST",
        CLAIMS,
        orjson.dumps(make_claim("c").set("spec.resourceClassNmae", "x").obj()),
        mode="Strict",
    )
    assert (code, result["message"]) == (
        400,
        CLAIM_STRICT + 'unknown field "spec.resourceClassNmae"',
    )


@pytest.mark.parametrize(
    ("method", "content_type", "body"),
    [
        pytest.param("PUT", "application/json", None, id="put"),
        pytest.param("PATCH", MERGE, {"spec": {"x": 1}}, id="merge"),
        pytest.param("PATCH", STRATEGIC, {"spec": {"x": 1}}, id="strategic"),
        pytest.param(
            "PATCH", JSON_PATCH, [{"op": "add", "path": "/spec/x", "value": 1}], id="json"
        ),
        pytest.param("PATCH", APPLY, None, id="apply"),
    ],
)
@pytest.mark.parametrize("mode", ["Strict", "Warn"])
async def test_update_and_patch(
    http: aiohttp.ClientSession,
    server: HttpServer,
    method: str,
    content_type: str,
    body: Any,
    mode: str,
) -> None:
    name = f"o{next(_names)}"
    created = await server.client().create(kinds.RESOURCE_CLAIMS, make_claim(name).obj())
    if body is None:
        body = dict(created) if method == "PUT" else make_claim("c").obj()
        body["spec"] = {**body["spec"], "x": 1}
        if method == "PATCH":
            body["metadata"] = {"name": name}
    params = "?fieldManager=test" if content_type == APPLY else ""
    code, result, warned = await _send(
        http,
        method,
        f"{CLAIMS}/{name}{params}",
        orjson.dumps(body),
        mode=mode,
        content_type=content_type,
    )
    stored = await server.client().get(kinds.RESOURCE_CLAIMS, name, "default")
    assert "x" not in stored["spec"]
    if mode == "Strict":
        assert (code, result["message"]) == (400, CLAIM_STRICT + 'unknown field "spec.x"')
    else:
        assert code == 200, result
        assert warned == ['299 - "unknown field \\"spec.x\\""']
        assert "x" not in result["spec"]


async def test_duplicate_in_a_merge_patch(http: aiohttp.ClientSession, server: HttpServer) -> None:
    name = f"o{next(_names)}"
    await server.client().create(kinds.PODS, make_pod(name).obj())
    body = b'{"metadata": {"labels": {"a": "1", "a": "2"}}}'
    code, result, _ = await _send(
        http, "PATCH", f"{PODS}/{name}", body, mode="Strict", content_type=MERGE
    )
    assert code == 400
    assert result["message"].endswith('strict decoding error: duplicate field "metadata.labels.a"')


async def test_an_unsupported_mode_is_a_bad_request(http: aiohttp.ClientSession) -> None:
    code, result, _ = await _send(
        http, "POST", CLAIMS, orjson.dumps(make_claim("c").obj()), mode="strict"
    )
    assert (code, result["reason"]) == (400, "BadRequest")
    assert "fieldValidation" in result["message"]


async def test_status_subresource_write_is_validated(
    http: aiohttp.ClientSession, server: HttpServer
) -> None:
    name = f"o{next(_names)}"
    await server.client().create(kinds.RESOURCE_CLAIMS, make_claim(name).obj())
    body = orjson.dumps({"status": {"driverNme": "d"}})
    code, result, _ = await _send(
        http, "PATCH", f"{CLAIMS}/{name}/status", body, mode="Strict", content_type=MERGE
    )
    assert (code, result["message"]) == (400, CLAIM_STRICT + 'unknown field "status.driverNme"')


_SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        pytest.param(
            _SSAR,
            {"spec": {"resourceAttributes": {"verb": "get", "verbb": "x"}}},
            'SelfSubjectAccessReview in version "v1" cannot be handled as a '
            "SelfSubjectAccessReview: strict decoding error: unknown field "
            '"spec.resourceAttributes.verbb"',
            id="review",
        ),
        pytest.param(
            f"{PODS}/{{name}}/binding",
            {"metadata": {"name": "{name}"}, "target": {"kind": "Node", "name": "n", "nme": "n"}},
            'Binding in version "v1" cannot be handled as a Binding: strict decoding error: '
            'unknown field "target.nme"',
            id="binding",
        ),
    ],
)
@pytest.mark.parametrize("mode", ["Strict", "Warn"])
async def test_create_only_kinds_and_subresource_bodies(
    http: aiohttp.ClientSession,
    server: HttpServer,
    path: str,
    body: dict[str, Any],
    message: str,
    mode: str,
) -> None:
    name = f"o{next(_names)}"
    await server.client().create(kinds.PODS, make_pod(name).obj())
    raw = orjson.dumps(body).replace(b"{name}", name.encode())
    code, result, warned = await _send(http, "POST", path.format(name=name), raw, mode=mode)
    if mode == "Strict":
        assert (code, result["message"]) == (400, message)
    else:
        assert code == 201, result
        assert len(warned) == 1 and "unknown field" in warned[0]


@pytest.mark.parametrize(
    ("body", "problems"),
    [
        pytest.param(
            "metadata: {name: NAME}\nspec:\n  resourceClassName: a\n  resourceClassName: b\n",
            ['duplicate field "spec.resourceClassName"'],
            id="repeated-key",
        ),
        pytest.param(
            "base: &b {resourceClassName: a}\nmetadata: {name: NAME}\nspec:\n  <<: *b\n"
            "  resourceClassName: b\n",
            ['unknown field "base"'],
            id="merge-override-is-not-repeating",
        ),
    ],
)
async def test_yaml_body(http: aiohttp.ClientSession, body: str, problems: list[str]) -> None:
    name = f"o{next(_names)}"
    code, result, _ = await _send(
        http,
        "POST",
        CLAIMS,
        body.replace("NAME", name).encode(),
        mode="Strict",
        content_type="application/yaml",
    )
    assert (code, result["message"]) == (400, CLAIM_STRICT + ", ".join(problems))
