"""Managed-fields path sets: FieldsV1 round trips, collection from configs, path strings."""

from __future__ import annotations

import pytest

from draplane.api import kinds
from draplane.api.managed_fields import (
    Path,
    collect,
    fields_to_paths,
    lookup,
    path_string,
    paths_to_fields,
)
from draplane.api.patch_schema import schema_for
from draplane.api.schema import schemas_for
from draplane.testing.builders import make_claim, make_pod

pod = (
    make_pod("web")
    .finalizer("x")
    .label("app", "web")
    .set("spec.containers", [{"name": "app", "image": "i", "ports": [{"containerPort": 80}]}])
    .set("spec.tolerations", [{"key": "k"}])
    .obj()
)
POD_PATHS = {
    ("f:metadata", "f:finalizers", 'v:"x"'),
    ("f:metadata", "f:labels", "f:app"),
    ("f:spec", "f:containers", 'k:{"name":"app"}'),
    ("f:spec", "f:containers", 'k:{"name":"app"}', "f:name"),
    ("f:spec", "f:containers", 'k:{"name":"app"}', "f:image"),
    ("f:spec", "f:containers", 'k:{"name":"app"}', "f:ports", 'k:{"containerPort":80}'),
    (
        "f:spec",
        "f:containers",
        'k:{"name":"app"}',
        "f:ports",
        'k:{"containerPort":80}',
        "f:containerPort",
    ),
    ("f:spec", "f:tolerations"),
}


def test_collect_tracks_leaves_items_and_set_values_but_not_identity() -> None:
    assert collect(pod, schema=schema_for(schemas_for(), kinds.PODS)) == POD_PATHS


def test_fields_v1_round_trip() -> None:
    fields = paths_to_fields(POD_PATHS)

    assert fields["f:spec"]["f:containers"]['k:{"name":"app"}']["."] == {}
    assert fields_to_paths(fields) == POD_PATHS


@pytest.mark.parametrize(
    ("path", "found", "value"),
    [
        pytest.param(
            ("f:spec", "f:containers", 'k:{"name":"app"}', "f:image"),
            True,
            "i",
            id="keyed-item-field",
        ),
        pytest.param(("f:metadata", "f:finalizers", 'v:"x"'), True, "x", id="set-value"),
        pytest.param(("f:metadata", "f:finalizers", 'v:"y"'), False, None, id="absent-value"),
        pytest.param(
            ("f:spec", "f:containers", 'k:{"name":"nope"}'), False, None, id="absent-item"
        ),
        pytest.param(("f:spec", "f:nodeName"), False, None, id="absent-field"),
    ],
)
def test_lookup(path: Path, found: bool, value: object) -> None:
    assert lookup(pod, path, schema=schema_for(schemas_for(), kinds.PODS)) == (found, value)


def test_reserved_for_items_are_keyed_by_uid() -> None:
    claim = make_claim("c").set("status.reservedFor", [{"resource": "pods", "uid": "u1"}]).obj()

    paths = collect(claim, schema=schema_for(schemas_for(), kinds.RESOURCE_CLAIMS))

    assert ("f:status", "f:reservedFor", 'k:{"uid":"u1"}') in paths


@pytest.mark.parametrize(
    ("path", "text"),
    [
        pytest.param(("f:spec", "f:priority"), ".spec.priority", id="fields"),
        pytest.param(
            ("f:spec", "f:containers", 'k:{"name":"app"}', "f:image"),
            '.spec.containers[name="app"].image',
            id="keyed-item",
        ),
        pytest.param(
            ("f:spec", "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'),
            '.spec.ports[containerPort=80,protocol="TCP"]',
            id="multi-key-item",
        ),
        pytest.param(
            ("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]', id="set-value"
        ),
    ],
)
def test_path_string(path: Path, text: str) -> None:
    assert path_string(path) == text
