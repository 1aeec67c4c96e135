"""LocalClient maps each Client call onto the ApiHandler verb, user and arguments unchanged,
and round-trips through the real registry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from draplane.api.auth import ADMIN_USER, UserInfo, node_user
from draplane.api.errors import StatusError
from draplane.api.kinds import NODES, PODS, RESOURCE_CLAIMS
from draplane.api.meta import Obj
from draplane.client.interface import PatchType
from draplane.client.local import LocalClient
from draplane.testing.builders import make_claim, make_node, make_pod
from draplane.testing.cluster import Cluster, start_cluster


class RecordingHandler:
    """An ApiHandler at the seam: records each call and echoes a marker object."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, UserInfo, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, verb: str) -> Any:
        async def call(user: UserInfo, *args: Any, **kwargs: Any) -> Obj:
            self.calls.append((verb, user, args, kwargs))
            return {"kind": "Recorded", "verb": verb}

        return call


@pytest.mark.parametrize(
    ("invoke", "want_verb", "want_args", "want_kwargs"),
    [
        pytest.param(
            lambda c: c.get(PODS, "p", "ns", subresource="status"),
            "get",
            (PODS, "ns", "p"),
            {"subresource": "status"},
            id="get",
        ),
        pytest.param(
            lambda c: c.list(RESOURCE_CLAIMS, "ns", label_selector="a=b", limit=5),
            "list",
            (RESOURCE_CLAIMS, "ns"),
            {
                "label_selector": "a=b",
                "field_selector": "",
                "limit": 5,
                "continue_": "",
                "resource_version": "",
            },
            id="list",
        ),
        pytest.param(
            lambda c: c.watch(PODS, resource_version="7", allow_bookmarks=True),
            "watch",
            (PODS, ""),
            {
                "resource_version": "7",
                "label_selector": "",
                "field_selector": "",
                "allow_bookmarks": True,
                "timeout_seconds": 0,
            },
            id="watch",
        ),
        pytest.param(
            lambda c: c.create(PODS, make_pod("p", "ns").obj()),
            "create",
            (PODS, "ns"),
            {"subresource": "", "name": "", "field_manager": ""},
            id="create-namespace-from-object",
        ),
        pytest.param(
            lambda c: c.create(NODES, make_node("n").obj(), field_manager="me"),
            "create",
            (NODES, ""),
            {"subresource": "", "name": "", "field_manager": "me"},
            id="create-cluster-scoped",
        ),
        pytest.param(
            lambda c: c.update(RESOURCE_CLAIMS, make_claim("c", "ns").obj(), subresource="status"),
            "update",
            (RESOURCE_CLAIMS, "ns", "c"),
            {"subresource": "status", "field_manager": ""},
            id="update",
        ),
        pytest.param(
            lambda c: c.patch(PODS, "p", [{"op": "add"}], "ns", patch_type="json"),
            "patch",
            (PODS, "ns", "p", [{"op": "add"}], "application/json-patch+json"),
            {"subresource": "", "field_manager": "", "force": False},
            id="patch-json",
        ),
        pytest.param(
            lambda c: c.patch(
                PODS, "p", {}, "ns", patch_type="apply", field_manager="m", force=True
            ),
            "patch",
            (PODS, "ns", "p", {}, "application/apply-patch+yaml"),
            {"subresource": "", "field_manager": "m", "force": True},
            id="patch-apply",
        ),
        pytest.param(
            lambda c: c.delete(PODS, "p", "ns"),
            "delete",
            (PODS, "ns", "p"),
            {"options": None},
            id="delete",
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
            "delete",
            (PODS, "ns", "p"),
            {
                "options": {
                    "kind": "DeleteOptions",
                    "apiVersion": "v1",
                    "propagationPolicy": "Foreground",
                    "gracePeriodSeconds": 0,
                    "preconditions": {"uid": "u"},
                }
            },
            id="delete-with-options",
        ),
        pytest.param(
            lambda c: c.delete_collection(PODS, "ns", label_selector="x"),
            "delete_collection",
            (PODS, "ns"),
            {"label_selector": "x", "field_selector": ""},
            id="delete-collection",
        ),
    ],
)
async def test_calls_handler_verb_as_user(
    invoke: Any, want_verb: str, want_args: tuple[Any, ...], want_kwargs: dict[str, Any]
) -> None:
    handler = RecordingHandler()
    user = node_user("node-0")
    client = LocalClient(handler, user)
    result = await invoke(client)
    assert result == {"kind": "Recorded", "verb": want_verb}
    verb, got_user, args, kwargs = handler.calls[0]
    assert (verb, got_user, args[: len(want_args)], kwargs) == (
        want_verb,
        user,
        want_args,
        want_kwargs,
    )
    assert client.user == "system:node:node-0"


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


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    c = await start_cluster()
    yield c
    await c.stop()


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
