"""Every REST verb through HTTPS with RESTClient, and the Status errors each can return."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from draplane.api import errors, kinds, versions
from draplane.api.kinds import ResourceType
from draplane.apiserver.server import ApiServer
from draplane.client.rest import RESTClient
from draplane.testing.builders import make_claim, make_class, make_node, make_pod
from draplane.testing.httpserver import HttpServer


@pytest.fixture
def client(server: HttpServer) -> RESTClient:
    return server.client()


def _strip_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    md = obj["metadata"]
    return {k: v for k, v in md.items() if k in ("name", "namespace", "labels")}


@pytest.mark.parametrize(
    ("rt", "obj"),
    [
        pytest.param(kinds.PODS, make_pod("p1").label("app", "a").obj(), id="pod"),
        pytest.param(kinds.NODES, make_node("n1").obj(), id="node-cluster-scoped"),
        pytest.param(kinds.RESOURCE_CLASSES, make_class("c1").obj(), id="resource-class"),
        pytest.param(kinds.RESOURCE_CLAIMS, make_claim("rc1").obj(), id="resource-claim"),
    ],
)
async def test_create_get_list_round_trip(
    client: RESTClient, rt: ResourceType, obj: dict[str, Any]
) -> None:
    ns = obj["metadata"].get("namespace", "")
    created = await client.create(rt, obj)
    got = await client.get(rt, obj["metadata"]["name"], ns)
    listed = await client.list(rt, ns)

    assert created["kind"] == rt.kind and created["apiVersion"] == rt.api_version
    assert created["metadata"]["resourceVersion"]
    assert got == created
    assert listed["kind"] == rt.list_kind
    assert [_strip_server_fields(o) for o in listed["items"]] == [_strip_server_fields(created)]


async def test_update_changes_object_and_stale_version_conflicts(client: RESTClient) -> None:
    created = await client.create(kinds.PODS, make_pod("p").obj())
    changed = {**created, "metadata": {**created["metadata"], "labels": {"x": "1"}}}

    updated = await client.update(kinds.PODS, changed)
    with pytest.raises(errors.StatusError) as err:
        await client.update(kinds.PODS, changed)  # carries the old resourceVersion

    assert updated["metadata"]["labels"] == {"x": "1"}
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert (err.value.code, err.value.reason) == (409, "Conflict")


async def test_create_existing_name_is_already_exists(client: RESTClient) -> None:
    await client.create(kinds.PODS, make_pod("p").obj())

    with pytest.raises(errors.StatusError) as err:
        await client.create(kinds.PODS, make_pod("p").obj())

    assert (err.value.code, err.value.reason) == (409, "AlreadyExists")
    assert err.value.message == 'pods "p" already exists'


@pytest.mark.parametrize(
    ("patch_type", "patch"),
    [
        pytest.param("merge", {"metadata": {"labels": {"k": "v"}}}, id="merge-patch"),
        pytest.param("strategic", {"metadata": {"labels": {"k": "v"}}}, id="strategic-merge"),
        pytest.param(
            "json",
            [{"op": "add", "path": "/metadata/labels", "value": {"k": "v"}}],
            id="json-patch",
        ),
        pytest.param(
            "apply",
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"k": "v"}}},
            id="server-side-apply",
        ),
    ],
)
async def test_patch_types(client: RESTClient, patch_type: Any, patch: Any) -> None:
    await client.create(kinds.PODS, make_pod("p").obj())

    patched = await client.patch(
        kinds.PODS, "p", patch, "default", patch_type=patch_type, field_manager="test"
    )

    assert patched["metadata"]["labels"]["k"] == "v"
    assert (await client.get(kinds.PODS, "p", "default"))["metadata"]["labels"]["k"] == "v"


async def test_status_subresource_put_and_get(client: RESTClient) -> None:
    created = await client.create(kinds.PODS, make_pod("p").obj())
    with_status = {**created, "status": {"phase": "Running"}}

    updated = await client.update(kinds.PODS, with_status, subresource="status")
    got = await client.get(kinds.PODS, "p", "default", subresource="status")

    assert updated["status"]["phase"] == "Running"
    assert got["status"]["phase"] == "Running"


async def test_binding_subresource_assigns_node(client: RESTClient) -> None:
    await client.create(kinds.PODS, make_pod("p").obj())
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p", "namespace": "default"},
        "target": {"kind": "Node", "name": "node-0"},
    }

    await client.create(kinds.PODS, binding, "default", subresource="binding", name="p")

    assert (await client.get(kinds.PODS, "p", "default"))["spec"]["nodeName"] == "node-0"


async def test_delete_and_delete_collection(client: RESTClient) -> None:
    for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
        await client.create(
            kinds.CONFIGMAPS,
            {"metadata": {"name": name, "namespace": "default", "labels": {"app": app}}},
        )

    await client.delete(kinds.CONFIGMAPS, "c", "default")
    await client.delete_collection(kinds.CONFIGMAPS, "default", label_selector="app=x")

    assert (await client.list(kinds.CONFIGMAPS, "default"))["items"] == []


async def test_delete_with_finalizer_keeps_object_with_deletion_timestamp(
    client: RESTClient,
) -> None:
    await client.create(
        kinds.CONFIGMAPS,
        {"metadata": {"name": "f", "namespace": "default", "finalizers": ["example.com/keep"]}},
    )

    result = await client.delete(kinds.CONFIGMAPS, "f", "default", propagation_policy="Background")

    assert result["metadata"]["deletionTimestamp"]
    assert (await client.get(kinds.CONFIGMAPS, "f", "default"))["metadata"]["deletionTimestamp"]


async def test_list_all_namespaces_and_selectors(client: RESTClient) -> None:
    await client.create(kinds.NAMESPACES, {"metadata": {"name": "other"}})
    await client.create(kinds.PODS, make_pod("a", "default").label("tier", "web").obj())
    await client.create(kinds.PODS, make_pod("b", "other").label("tier", "db").obj())

    everything = await client.list(kinds.PODS)
    web = await client.list(kinds.PODS, label_selector="tier=web")
    by_name = await client.list(kinds.PODS, field_selector="metadata.name=b")

    assert sorted(p["metadata"]["name"] for p in everything["items"]) == ["a", "b"]
    assert [p["metadata"]["name"] for p in web["items"]] == ["a"]
    assert [p["metadata"]["name"] for p in by_name["items"]] == ["b"]


async def test_list_pagination_with_limit_and_continue(client: RESTClient) -> None:
    for i in range(5):
        await client.create(
            kinds.CONFIGMAPS, {"metadata": {"name": f"cm{i}", "namespace": "default"}}
        )

    first = await client.list(kinds.CONFIGMAPS, "default", limit=2)
    second = await client.list(
        kinds.CONFIGMAPS, "default", limit=10, continue_=first["metadata"]["continue"]
    )

    assert [o["metadata"]["name"] for o in first["items"]] == ["cm0", "cm1"]
    assert [o["metadata"]["name"] for o in second["items"]] == ["cm2", "cm3", "cm4"]
    assert not second["metadata"].get("continue")


@dataclass(frozen=True)
class ErrorCase:
    method: str
    path: str
    code: int
    reason: str
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            ErrorCase("GET", "/api/v1/namespaces/default/pods/nope", 404, "NotFound"),
            id="get-missing-object",
        ),
        pytest.param(ErrorCase("GET", "/api/v1/widgets", 404, "NotFound"), id="unknown-resource"),
        pytest.param(
            ErrorCase("GET", "/apis/nope.io/v1/things", 404, "NotFound"), id="unknown-group"
        ),
        pytest.param(
            ErrorCase("GET", "/api/v1/namespaces/default/pods/p/logs", 404, "NotFound"),
            id="unknown-subresource",
        ),
        pytest.param(
            ErrorCase("GET", "/api/v1/namespaces/default/nodes", 404, "NotFound"),
            id="cluster-scoped-kind-under-namespace",
        ),
        pytest.param(
            ErrorCase("PUT", "/api/v1/namespaces/default/pods", 405, "MethodNotAllowed", body={}),
            id="put-on-collection",
        ),
        pytest.param(
            ErrorCase("POST", "/api/v1/pods", 405, "MethodNotAllowed", body={}),
            id="post-all-namespaces",
        ),
        pytest.param(
            ErrorCase(
                "POST", "/api/v1/namespaces/default/pods/p/binding/x", 404, "NotFound", body={}
            ),
            id="too-deep-path",
        ),
        pytest.param(
            ErrorCase(
                "GET", "/api/v1/pods", 400, "BadRequest", params={"labelSelector": "a in (b"}
            ),
            id="bad-label-selector",
        ),
        pytest.param(
            ErrorCase(
                "GET", "/api/v1/pods", 400, "BadRequest", params={"fieldSelector": "spec.bogus=1"}
            ),
            id="unsupported-field-selector",
        ),
        pytest.param(
            ErrorCase("GET", "/api/v1/pods", 400, "BadRequest", params={"limit": "x"}),
            id="non-integer-limit",
        ),
        pytest.param(
            ErrorCase("GET", "/api/v1/pods", 400, "BadRequest", params={"watch": "maybe"}),
            id="non-boolean-watch",
        ),
        pytest.param(
            ErrorCase(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                400,
                "BadRequest",
                body={"metadata": {"name": "a"}},
                params={"dryRun": "Some"},
            ),
            id="bad-dry-run",
        ),
        pytest.param(
            ErrorCase(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                400,
                "BadRequest",
                body={"metadata": {"name": "a"}},
                params={"fieldValidation": "Loud"},
            ),
            id="bad-field-validation",
        ),
        pytest.param(
            ErrorCase(
                "POST",
                "/api/v1/namespaces/default/pods",
                422,
                "Invalid",
                body={"metadata": {"name": "p"}, "spec": {"containers": []}},
            ),
            id="invalid-pod",
        ),
        pytest.param(
            ErrorCase(
                "POST",
                "/api/v1/namespaces/missing/configmaps",
                404,
                "NotFound",
                body={"metadata": {"name": "a"}},
            ),
            id="missing-namespace",
        ),
        pytest.param(
            ErrorCase(
                "PATCH",
                "/api/v1/namespaces/default/pods/nope",
                404,
                "NotFound",
                body={"metadata": {}},
            ),
            id="patch-missing-object",
        ),
        pytest.param(
            ErrorCase("DELETE", "/api/v1/namespaces/default/pods/nope", 404, "NotFound"),
            id="delete-missing-object",
        ),
    ],
)
async def test_errors_are_status_bodies(client: RESTClient, case: ErrorCase) -> None:
    content_type = "application/merge-patch+json" if case.method == "PATCH" else "application/json"
    with pytest.raises(errors.StatusError) as err:
        await client.request(
            case.method, case.path, params=case.params, body=case.body, content_type=content_type
        )

    assert (err.value.code, err.value.reason) == (case.code, case.reason)
    assert err.value.message


async def test_invalid_object_carries_causes(client: RESTClient) -> None:
    with pytest.raises(errors.StatusError) as err:
        await client.create(
            kinds.PODS,
            {
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c"}]},
            },
        )

    assert err.value.code == 422
    causes = err.value.details["causes"]
    assert {"reason": "FieldValueRequired", "field": "spec.containers[0].image"} in [
        {"reason": c["reason"], "field": c["field"]} for c in causes
    ]


async def test_dry_run_create_stores_nothing(client: RESTClient) -> None:
    result = await client.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        params={"dryRun": "All"},
        body={"metadata": {"name": "dry"}},
    )

    assert result["metadata"]["name"] == "dry"
    with pytest.raises(errors.StatusError) as err:
        await client.get(kinds.CONFIGMAPS, "dry", "default")
    assert err.value.code == 404


class _FailingGets:
    """The real registry, except that GET raises an unexpected exception (a bug stand-in)."""

    def __init__(self, registry: Any) -> None:
        self._registry = registry

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry, name)

    async def handle(self, user: Any, request: Any) -> Any:
        if request.verb == "get":
            raise RuntimeError("secret internal detail")
        return await self._registry.handle(user, request)


async def test_unexpected_exception_is_500_status_without_traceback(
    server: HttpServer, tmp_path: Path
) -> None:
    broken = ApiServer(
        tmp_path / "broken",
        port=0,
        storage=server.storage,
        handler=_FailingGets(server.registry),
        mode=versions.CLASSIC,
    )
    await broken.start()
    client = RESTClient.from_kubeconfig(broken.kubeconfig_path)
    try:
        with pytest.raises(errors.StatusError) as err:
            await client.get(kinds.NAMESPACES, "default")
        listed = await client.list(kinds.NAMESPACES)
    finally:
        await client.close()
        await broken.stop()

    assert (err.value.code, err.value.reason) == (500, "InternalError")
    assert "secret" not in err.value.message and "Traceback" not in err.value.message
    assert listed["kind"] == "NamespaceList"
