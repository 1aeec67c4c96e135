"""LocalClient turns each Client call into one Request sent to the ApiHandler as its user, and
round-trips through the real registry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from draplane.api.auth import ADMIN_USER, UserInfo, node_user
from draplane.api.errors import StatusError
from draplane.api.kinds import NODES, PODS, RESOURCE_CLAIMS
from draplane.api.request import Options, Request
from draplane.client.interface import PatchType
from draplane.client.local import LocalClient
from draplane.testing.builders import make_claim, make_pod
from draplane.testing.cluster import Cluster


class RecordingHandler:
    """An ApiHandler at the seam: records each request and echoes a marker object."""

    def __init__(self) -> None:
        self.calls: list[tuple[UserInfo, Request]] = []

    async def handle(self, user: UserInfo, request: Request) -> Any:
        self.calls.append((user, request))
        if request.verb == "watch":
            return _EmptyStream()
        return {"kind": "Recorded", "verb": request.verb}


class _EmptyStream:
    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        raise StopAsyncIteration

    async def close(self) -> None:
        return None


_POD = {"metadata": {"name": "p", "namespace": "ns"}}
_NODE = {"metadata": {"name": "n"}}
_CLAIM = {"metadata": {"name": "c", "namespace": "ns"}}
_DELETE_OPTIONS = {
    "kind": "DeleteOptions",
    "apiVersion": "v1",
    "propagationPolicy": "Foreground",
    "gracePeriodSeconds": 0,
    "preconditions": {"uid": "u"},
}


@pytest.mark.parametrize(
    ("invoke", "want"),
    [
        pytest.param(
            lambda c: c.get(PODS, "p", "ns", subresource="status"),
            Request("get", PODS, "ns", "p", "status"),
            id="get",
        ),
        pytest.param(
            lambda c: c.list(RESOURCE_CLAIMS, "ns", label_selector="a=b", limit=5),
            Request("list", RESOURCE_CLAIMS, "ns", options=Options(label_selector="a=b", limit=5)),
            id="list",
        ),
        pytest.param(
            lambda c: c.watch(PODS, resource_version="7", allow_bookmarks=True),
            Request("watch", PODS, options=Options(resource_version="7", allow_bookmarks=True)),
            id="watch",
        ),
        pytest.param(
            lambda c: c.create(PODS, _POD),
            Request("create", PODS, "ns", body=_POD),
            id="create-namespace-from-object",
        ),
        pytest.param(
            lambda c: c.create(NODES, _NODE, field_manager="me"),
            Request("create", NODES, body=_NODE, options=Options(field_manager="me")),
            id="create-cluster-scoped",
        ),
        pytest.param(
            lambda c: c.create(
                PODS, {"target": {"name": "n"}}, "ns", subresource="binding", name="p"
            ),
            Request("create", PODS, "ns", "p", "binding", {"target": {"name": "n"}}),
            id="create-subresource",
        ),
        pytest.param(
            lambda c: c.update(RESOURCE_CLAIMS, _CLAIM, subresource="status"),
            Request("update", RESOURCE_CLAIMS, "ns", "c", "status", _CLAIM),
            id="update",
        ),
        pytest.param(
            lambda c: c.patch(PODS, "p", [{"op": "add"}], "ns", patch_type="json"),
            Request(
                "patch",
                PODS,
                "ns",
                "p",
                body=[{"op": "add"}],
                options=Options(patch_type="application/json-patch+json"),
            ),
            id="patch-json",
        ),
        pytest.param(
            lambda c: c.patch(
                PODS, "p", {}, "ns", patch_type="apply", field_manager="m", force=True
            ),
            Request(
                "patch",
                PODS,
                "ns",
                "p",
                body={},
                options=Options(
                    field_manager="m", force=True, patch_type="application/apply-patch+yaml"
                ),
            ),
            id="patch-apply",
        ),
        pytest.param(
            lambda c: c.delete(PODS, "p", "ns"), Request("delete", PODS, "ns", "p"), id="delete"
        ),
        pytest.param(
            lambda c: c.delete(
                PODS,
                "p",
                "ns",
                grace_period_seconds=0,
                preconditions={"uid": "u"},
                propagation_policy="Foreground",
            ),
            Request("delete", PODS, "ns", "p", body=_DELETE_OPTIONS),
            id="delete-with-options",
        ),
        pytest.param(
            lambda c: c.delete_collection(PODS, "ns", label_selector="x"),
            Request("deletecollection", PODS, "ns", options=Options(label_selector="x")),
            id="delete-collection",
        ),
    ],
)
async def test_sends_one_request_as_user(invoke: Any, want: Request) -> None:
    handler = RecordingHandler()
    user = node_user("node-0")
    client = LocalClient(handler, user)
    await invoke(client)
    assert handler.calls == [(user, want)]


@pytest.mark.parametrize(
    "invoke",
    [
        pytest.param(lambda c: c.patch(PODS, "p", {}, patch_type="bogus"), id="bad-patch-type"),
        pytest.param(lambda c: c.update(PODS, {"metadata": {}}), id="update-without-name"),
        pytest.param(lambda c: c.create(PODS, ["not", "a", "dict"]), id="create-non-object"),
        pytest.param(lambda c: c.delete(PODS, ""), id="delete-without-name"),
    ],
)
async def test_bad_input_is_a_400_status_error(invoke: Any) -> None:
    handler = RecordingHandler()
    with pytest.raises(StatusError) as err:
        await invoke(LocalClient(handler, ADMIN_USER))
    assert err.value.code == 400
    assert handler.calls == []


@pytest.mark.parametrize(
    ("patch_type", "patch"),
    [
        pytest.param("merge", {"metadata": {"labels": {"app": "x"}}}, id="merge"),
        pytest.param("strategic", {"metadata": {"labels": {"app": "x"}}}, id="strategic"),
        pytest.param(
            "json", [{"op": "add", "path": "/metadata/labels", "value": {"app": "x"}}], id="json"
        ),
    ],
)
async def test_round_trip_through_real_registry(
    cluster: Cluster, patch_type: PatchType, patch: Any
) -> None:
    client = cluster.client()
    created = await client.create(PODS, make_pod("web").obj())
    assert created["metadata"]["namespace"] == "default"
    patched = await client.patch(PODS, "web", patch, "default", patch_type=patch_type)
    assert patched["metadata"]["labels"] == {"app": "x"}
    got = await client.get(PODS, "web", "default")
    assert got["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]
    await client.delete(PODS, "web", "default", grace_period_seconds=0)
    with pytest.raises(StatusError) as err:
        await client.get(PODS, "web", "default")
    assert err.value.code == 404


async def test_stale_update_is_a_conflict(cluster: Cluster) -> None:
    client = cluster.client()
    created = await client.create(RESOURCE_CLAIMS, make_claim("c").obj())
    await client.patch(RESOURCE_CLAIMS, "c", {"metadata": {"labels": {"a": "b"}}}, "default")
    with pytest.raises(StatusError) as err:
        await client.update(RESOURCE_CLAIMS, created)
    assert err.value.reason == "Conflict"
