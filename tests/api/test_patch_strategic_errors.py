"""Strategic merge patch: malformed patches become Status errors, never other exceptions."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.errors import StatusError
from draplane.api.meta import Obj
from draplane.api.patch import apply_strategic_merge_patch
from draplane.api.schema import schemas_for
from draplane.testing.builders import make_node, make_pod

rich_pod = make_pod("web").finalizer("a").obj()


def containers(*items: Obj) -> Obj:
    return {"spec": {"containers": list(items)}}


@pytest.mark.parametrize(
    ("original", "patch", "code", "message"),
    [
        pytest.param(
            rich_pod,
            containers({"image": "x"}),
            400,
            "map: map[image:x] does not contain declared merge key: name",
            id="element-without-merge-key",
        ),
        pytest.param(
            rich_pod,
            containers({"$patch": "delete", "image": "x"}),
            400,
            "map: map[$patch:delete image:x] does not contain declared merge key: name",
            id="delete-without-merge-key",
        ),
        pytest.param(
            rich_pod,
            containers({"$patch": "merge"}),
            400,
            "merging lists cannot yet be specified in the patch",
            id="list-patch-merge",
        ),
        pytest.param(
            rich_pod,
            containers({"$patch": "explode", "name": "app"}),
            400,
            "unknown patch type: explode in map: map[$patch:explode name:app]",
            id="list-unknown-directive",
        ),
        pytest.param(
            rich_pod,
            {"metadata": {"labels": {"$patch": "explode"}}},
            400,
            "unknown patch type: explode in map: map[]",
            id="map-unknown-directive",
        ),
        pytest.param(
            rich_pod,
            {"metadata": {"finalizers": [["a"]]}},
            422,
            "lists of lists are not supported",
            id="list-of-lists",
        ),
        pytest.param(
            rich_pod,
            {"metadata": {"finalizers": ["b", {"x": 1}]}},
            400,
            "list element types are not identical in metadata.finalizers",
            id="mixed-element-types",
        ),
        pytest.param(
            make_node("bare").obj(),
            {"spec": {"podCIDRs": [{"cidr": "x"}]}},
            400,
            "cannot merge lists without merge key for spec.podCIDRs",
            id="maps-in-a-keyless-merge-list",
        ),
        pytest.param(
            rich_pod,
            {"spec": {"$retainKeys": "containers"}},
            400,
            "invalid patch format of retainKeys",
            id="retain-keys-not-a-list",
        ),
        pytest.param(
            rich_pod,
            {"spec": {"$retainKeys": ["volumes"], "priority": 1}},
            422,
            "patch content doesn't match retainKeys list",
            id="retain-keys-does-not-cover-patch",
        ),
        pytest.param(
            rich_pod,
            {"metadata": {"$setElementOrder/finalizers": "a"}},
            400,
            "invalid patch format of setElementOrder list",
            id="set-element-order-not-a-list",
        ),
        pytest.param(
            rich_pod,
            {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
            400,
            "invalid patch format of primitive list",
            id="delete-from-primitive-list-not-a-list",
        ),
        pytest.param(
            rich_pod,
            [{"op": "add"}],
            400,
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
            id="body-is-a-list",
        ),
        pytest.param(
            rich_pod,
            None,
            400,
            "json: cannot unmarshal null into Go value of type map[string]interface {}",
            id="body-is-null",
        ),
    ],
)
def test_strategic_merge_patch_errors(original: Obj, patch: Any, code: int, message: str) -> None:
    with pytest.raises(StatusError) as info:
        rt = kinds.NODES if original["kind"] == "Node" else kinds.PODS
        apply_strategic_merge_patch(original, patch, rt, schemas_for())

    assert (info.value.code, info.value.message) == (code, message)
