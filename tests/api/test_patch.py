"""JSON patch (RFC 6902), merge patch (RFC 7386) and content-type dispatch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.errors import StatusError
from draplane.api.meta import Obj, deep_copy
from draplane.api.patch import (
    JSON_PATCH,
    MAX_JSON_PATCH_OPERATIONS,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    apply_json_patch,
    apply_merge_patch,
    json_equal,
    patch_object,
)
from draplane.api.schema import schemas_for
from draplane.testing.builders import make_claim, make_pod

base_pod = (
    make_pod("web")
    .uid("uid-1")
    .resource_version("7")
    .label("app", "web")
    .finalizer("example.com/a")
    .obj()
)


@dataclass(frozen=True)
class JsonCase:
    ops: Any
    path: tuple[str | int, ...] = ()
    expected: Any = None


def at(obj: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        obj = obj[part]
    return obj


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            JsonCase(
                [{"op": "add", "path": "/metadata/labels/tier", "value": "front"}],
                ("metadata", "labels"),
                {"app": "web", "tier": "front"},
            ),
            id="add-map-key",
        ),
        pytest.param(
            JsonCase(
                [{"op": "add", "path": "/metadata/finalizers/-", "value": "example.com/b"}],
                ("metadata", "finalizers"),
                ["example.com/a", "example.com/b"],
            ),
            id="add-append-dash",
        ),
        pytest.param(
            JsonCase(
                [{"op": "add", "path": "/metadata/finalizers/0", "value": "example.com/z"}],
                ("metadata", "finalizers"),
                ["example.com/z", "example.com/a"],
            ),
            id="add-insert-index",
        ),
        pytest.param(
            JsonCase(
                [{"op": "remove", "path": "/metadata/finalizers/0"}],
                ("metadata", "finalizers"),
                [],
            ),
            id="remove-list-item",
        ),
        pytest.param(
            JsonCase(
                [{"op": "replace", "path": "/metadata/labels/app", "value": "api"}],
                ("metadata", "labels", "app"),
                "api",
            ),
            id="replace-value",
        ),
        pytest.param(
            JsonCase(
                [{"op": "move", "from": "/metadata/labels/app", "path": "/metadata/labels/x"}],
                ("metadata", "labels"),
                {"x": "web"},
            ),
            id="move",
        ),
        pytest.param(
            JsonCase(
                [{"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"}],
                ("metadata", "annotations"),
                {"app": "web"},
            ),
            id="copy",
        ),
        pytest.param(
            JsonCase(
                [
                    {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
                    {"op": "remove", "path": "/metadata/finalizers"},
                ],
                ("metadata",),
                {
                    "name": "web",
                    "namespace": "default",
                    "uid": "uid-1",
                    "resourceVersion": "7",
                    "labels": {"app": "web"},
                },
            ),
            id="kopf-style-test-then-remove",
        ),
        pytest.param(
            JsonCase(
                [{"op": "add", "path": "/metadata/annotations", "value": {"a/b~c": "1"}}],
                ("metadata", "annotations"),
                {"a/b~c": "1"},
            ),
            id="add-whole-map",
        ),
        pytest.param(
            JsonCase(
                [
                    {"op": "add", "path": "/metadata/annotations", "value": {}},
                    {"op": "add", "path": "/metadata/annotations/a~1b~0c", "value": "1"},
                ],
                ("metadata", "annotations"),
                {"a/b~c": "1"},
            ),
            id="pointer-escapes",
        ),
        pytest.param(JsonCase([], ("metadata", "name"), "web"), id="empty-patch"),
    ],
)
def test_json_patch_applies(case: JsonCase) -> None:
    before = deep_copy(base_pod)

    result = apply_json_patch(base_pod, case.ops)

    assert at(result, case.path) == case.expected
    assert base_pod == before


@pytest.mark.parametrize(
    ("ops", "code", "message"),
    [
        pytest.param(
            [{"op": "test", "path": "/metadata/resourceVersion", "value": "6"}],
            422,
            "testing value /metadata/resourceVersion failed: test failed",
            id="test-op-mismatch",
        ),
        pytest.param(
            [{"op": "test", "path": "/metadata/nope", "value": "6"}],
            422,
            "testing value /metadata/nope failed: test failed",
            id="test-op-missing-path",
        ),
        pytest.param(
            [{"op": "test", "path": "/metadata/finalizers/0", "value": 1}],
            422,
            "testing value /metadata/finalizers/0 failed: test failed",
            id="test-op-type-mismatch",
        ),
        pytest.param(
            [{"op": "remove", "path": "/metadata/nope"}],
            422,
            "error in remove for path: '/metadata/nope': Unable to remove nonexistent key: nope: "
            "missing value",
            id="remove-missing-key",
        ),
        pytest.param(
            [{"op": "replace", "path": "/spec/nope", "value": 1}],
            422,
            "replace operation does not apply: doc is missing key: /spec/nope: missing value",
            id="replace-missing-key",
        ),
        pytest.param(
            [{"op": "add", "path": "/a/b/c", "value": 1}],
            422,
            'add operation does not apply: doc is missing path: "/a/b/c": missing value',
            id="add-missing-parent",
        ),
        pytest.param(
            [{"op": "add", "path": "/metadata/finalizers/5", "value": "x"}],
            422,
            "add operation does not apply: Unable to access invalid index: 5 at "
            "/metadata/finalizers/5",
            id="add-index-out-of-range",
        ),
        pytest.param(
            [{"op": "remove", "path": "/metadata/finalizers/-"}],
            422,
            "remove operation does not apply: Unable to access invalid index: - at "
            "/metadata/finalizers/-",
            id="remove-dash-index",
        ),
        pytest.param(
            [{"op": "frobnicate", "path": "/a"}], 422, "Unexpected kind: frobnicate", id="bad-op"
        ),
        pytest.param([{"path": "/a"}], 422, "Unexpected kind: unknown", id="missing-op"),
        pytest.param(
            [{"op": "add", "value": 1}], 422, "add operation failed to decode path", id="no-path"
        ),
        pytest.param(
            [{"op": "add", "path": "metadata"}],
            422,
            "add operation does not apply: invalid JSON pointer 'metadata'",
            id="pointer-without-slash",
        ),
        pytest.param(
            [{"op": "add", "path": "/metadata/x"}],
            422,
            "add operation does not apply: missing value for /metadata/x",
            id="add-without-value",
        ),
        pytest.param(
            [{"op": "move", "from": "/metadata", "path": "/metadata/labels/m"}],
            422,
            "move operation does not apply: cannot move /metadata into its own child "
            "/metadata/labels/m",
            id="move-into-child",
        ),
        pytest.param(
            [{"op": "copy", "from": "/nope", "path": "/x"}],
            422,
            "copy operation does not apply: doc is missing from path: /nope: missing value",
            id="copy-missing-from",
        ),
        pytest.param(
            {"op": "add", "path": "/a", "value": 1},
            400,
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            id="body-not-a-list",
        ),
        pytest.param(
            ["add"],
            400,
            "json: cannot unmarshal array into Go value of type jsonpatch.Patch",
            id="list-of-strings",
        ),
        pytest.param(
            [{"op": "replace", "path": "", "value": [1]}],
            400,
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
            id="root-replaced-by-array",
        ),
    ],
)
def test_json_patch_errors(ops: Any, code: int, message: str) -> None:
    before = deep_copy(base_pod)

    with pytest.raises(StatusError) as info:
        apply_json_patch(base_pod, ops)

    assert (info.value.code, info.value.message) == (code, message)
    assert info.value.reason == ("Invalid" if code == 422 else "BadRequest")
    assert base_pod == before


def test_json_patch_test_failure_is_a_status_body() -> None:
    with pytest.raises(StatusError) as info:
        apply_json_patch(base_pod, [{"op": "test", "path": "/metadata/name", "value": "x"}])

    assert info.value.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "testing value /metadata/name failed: test failed",
        "reason": "Invalid",
        "code": 422,
        "details": {"causes": [{"message": "testing value /metadata/name failed: test failed"}]},
    }


def test_json_patch_too_many_operations() -> None:
    ops = [{"op": "test", "path": "/kind", "value": "Pod"}] * (MAX_JSON_PATCH_OPERATIONS + 1)

    with pytest.raises(StatusError) as info:
        apply_json_patch(base_pod, ops)

    assert info.value.code == 413


def test_json_patch_at_the_operation_limit_applies() -> None:
    ops = [{"op": "test", "path": "/kind", "value": "Pod"}] * MAX_JSON_PATCH_OPERATIONS

    assert apply_json_patch(base_pod, ops) == base_pod


def test_json_patch_added_value_is_not_shared_with_the_patch() -> None:
    value = {"a": "1"}
    ops = [{"op": "add", "path": "/metadata/annotations", "value": value}]

    result = apply_json_patch(base_pod, ops)
    result["metadata"]["annotations"]["a"] = "changed"

    assert value == {"a": "1"}


@pytest.mark.parametrize(
    ("patch", "expected_metadata"),
    [
        pytest.param(
            {"metadata": {"labels": {"tier": "front"}}},
            {"labels": {"app": "web", "tier": "front"}, "finalizers": ["example.com/a"]},
            id="merge-nested-map",
        ),
        pytest.param(
            {"metadata": {"labels": {"app": None}}},
            {"labels": {}, "finalizers": ["example.com/a"]},
            id="null-deletes-key",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["example.com/b"]}},
            {"labels": {"app": "web"}, "finalizers": ["example.com/b"]},
            id="lists-replace",
        ),
        pytest.param(
            {"metadata": {"finalizers": None, "labels": None}},
            {},
            id="null-deletes-subtrees",
        ),
        pytest.param(
            {"metadata": {"annotations": {"a": "1", "b": None}}},
            {
                "labels": {"app": "web"},
                "finalizers": ["example.com/a"],
                "annotations": {"a": "1"},
            },
            id="nulls-in-new-map-are-dropped",
        ),
        pytest.param(
            {"metadata": {"labels": "flat"}},
            {"labels": "flat", "finalizers": ["example.com/a"]},
            id="scalar-replaces-map",
        ),
    ],
)
def test_merge_patch(patch: Obj, expected_metadata: Obj) -> None:
    before = deep_copy(base_pod)

    result = apply_merge_patch(base_pod, patch)

    keep = {"name", "namespace", "uid", "resourceVersion"}
    assert {k: v for k, v in result["metadata"].items() if k not in keep} == expected_metadata
    assert base_pod == before


def test_merge_patch_result_does_not_alias_the_patch() -> None:
    patch = {"spec": {"containers": [{"name": "c", "image": "i"}]}}

    result = apply_merge_patch(base_pod, patch)
    result["spec"]["containers"][0]["image"] = "changed"

    assert patch["spec"]["containers"][0]["image"] == "i"


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param(None, id="null"),
        pytest.param([{"op": "add"}], id="array"),
        pytest.param("text", id="string"),
        pytest.param(3, id="number"),
    ],
)
def test_merge_patch_rejects_non_object_bodies(patch: Any) -> None:
    with pytest.raises(StatusError) as info:
        apply_merge_patch(base_pod, patch)

    assert (info.value.code, info.value.reason) == (400, "BadRequest")


@pytest.mark.parametrize(
    ("content_type", "patch", "expected_finalizers"),
    [
        pytest.param(
            JSON_PATCH,
            [{"op": "add", "path": "/metadata/finalizers/-", "value": "b"}],
            ["example.com/a", "b"],
            id="json-patch",
        ),
        pytest.param(
            MERGE_PATCH,
            {"metadata": {"finalizers": ["b"]}},
            ["b"],
            id="merge-patch-replaces-list",
        ),
        pytest.param(
            STRATEGIC_MERGE_PATCH,
            {"metadata": {"finalizers": ["b"]}},
            ["b", "example.com/a"],
            id="strategic-merges-finalizers",
        ),
        pytest.param(
            "Application/Merge-Patch+JSON; charset=utf-8",
            {"metadata": {"finalizers": ["b"]}},
            ["b"],
            id="media-type-parameters-and-case",
        ),
    ],
)
def test_patch_object_dispatches_on_content_type(
    content_type: str, patch: Any, expected_finalizers: list[str]
) -> None:
    result = patch_object(base_pod, patch, content_type, kinds.PODS, schemas_for())

    assert result["metadata"]["finalizers"] == expected_finalizers


@pytest.mark.parametrize(
    "content_type",
    [
        pytest.param("application/json", id="plain-json"),
        pytest.param("application/apply-patch+yaml", id="apply-is-not-a-patch-engine"),
        pytest.param("", id="empty"),
    ],
)
def test_patch_object_rejects_unknown_content_types(content_type: str) -> None:
    with pytest.raises(StatusError) as info:
        patch_object(make_claim().obj(), {}, content_type, kinds.RESOURCE_CLAIMS, schemas_for())

    assert (info.value.code, info.value.reason) == (415, "UnsupportedMediaType")


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        pytest.param(1, 1.0, True, id="int-float"),
        pytest.param(True, 1, False, id="bool-is-not-int"),
        pytest.param(False, 0, False, id="false-is-not-zero"),
        pytest.param({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, True, id="nested"),
        pytest.param({"a": 1}, {"a": 1, "b": 2}, False, id="extra-key"),
        pytest.param([1, 2], [2, 1], False, id="order-matters"),
        pytest.param("1", 1, False, id="string-vs-number"),
        pytest.param(None, None, True, id="null"),
    ],
)
def test_json_equal(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
