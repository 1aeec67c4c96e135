"""ObjectMeta rules shared by every kind: names, namespaces, labels, annotations, owner
references, finalizers, and the update-time immutability rules.
"""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.testing import kindrules as validation
from draplane.testing.builders import make_claim, make_class, make_node

REQ, INV, FORB, TOO_LONG = (
    "FieldValueRequired",
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueTooLong",
)


def _causes(errs: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


def _cm(**metadata: Any) -> Obj:
    md = {"name": "cm", "namespace": "default", **metadata}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}


@pytest.mark.parametrize(
    ("rt", "obj", "causes"),
    [
        pytest.param(kinds.CONFIGMAPS, _cm(), [], id="valid"),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(name=""),
            [(REQ, "metadata.name")],
            id="name-required",
        ),
        pytest.param(
            kinds.CONFIGMAPS, _cm(name="My.Config"), [(INV, "metadata.name")], id="name-invalid"
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(name="x", generateName="Bad_"),
            [(INV, "metadata.generateName")],
            id="generate-name-invalid",
        ),
        pytest.param(
            kinds.CONFIGMAPS, _cm(namespace=""), [(REQ, "metadata.namespace")], id="ns-required"
        ),
        pytest.param(
            kinds.CONFIGMAPS, _cm(namespace="a.b"), [(INV, "metadata.namespace")], id="ns-label"
        ),
        pytest.param(
            kinds.NODES,
            make_node("node.example.com").namespace("default").obj(),
            [(FORB, "metadata.namespace")],
            id="cluster-scoped-namespace",
        ),
        pytest.param(
            kinds.NAMESPACES,
            {"metadata": {"name": "a.b"}},
            [(INV, "metadata.name")],
            id="namespace-name-is-label",
        ),
        pytest.param(
            kinds.NODES, make_node("node.example.com").obj(), [], id="node-name-subdomain"
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(labels={"app": "web", "example.com/tier": "front_end.1"}),
            [],
            id="labels-valid",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(labels={"a/b/c": "x", "ok": "-bad", "long": "v" * 64}),
            [(INV, "metadata.labels"), (INV, "metadata.labels"), (INV, "metadata.labels")],
            id="labels-invalid",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(labels={"n": 5}),
            [("FieldValueTypeInvalid", "metadata.labels")],
            id="label-value-not-string",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(annotations={"Example.COM/Key": "v", "a b": "x"}),
            [(INV, "metadata.annotations")],
            id="annotation-keys-case-insensitive",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(annotations={"big": "x" * (256 * 1024)}),
            [(TOO_LONG, "metadata.annotations")],
            id="annotations-too-large",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}]),
            [],
            id="owner-valid",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(ownerReferences=[{"apiVersion": "apps/", "kind": "", "name": "", "uid": ""}]),
            [
                (INV, "metadata.ownerReferences.apiVersion"),
                (INV, "metadata.ownerReferences.kind"),
                (INV, "metadata.ownerReferences.name"),
                (INV, "metadata.ownerReferences.uid"),
            ],
            id="owner-fields",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(
                ownerReferences=[
                    {"apiVersion": "v1", "kind": "Pod", "name": n, "uid": n, "controller": True}
                    for n in ("a", "b")
                ]
            ),
            [(INV, "metadata.ownerReferences")],
            id="two-controllers",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(finalizers=["kubernetes", "orphan", "example.com/x"]),
            [],
            id="finalizers-valid",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(finalizers=["custom"]),
            [(INV, "metadata.finalizers[0]")],
            id="finalizer-not-qualified",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            _cm(finalizers=["orphan", "foregroundDeletion"]),
            [(INV, "metadata.finalizers")],
            id="orphan-and-foreground",
        ),
        pytest.param(
            kinds.LEASES,
            {"metadata": {"name": "l", "namespace": "kube-system", "generation": -1}},
            [(INV, "metadata.generation")],
            id="negative-generation",
        ),
    ],
)
def test_object_meta_create(rt: ResourceType, obj: Obj, causes: list[tuple[str, str]]) -> None:
    assert _causes(validation.validate_create(rt, obj)) == causes


def test_name_error_message_matches_kubernetes() -> None:
    errs = validation.validate_create(kinds.CONFIGMAPS, _cm(name="My.Config"))
    assert (
        errs[0]
        .message()
        .startswith('Invalid value: "My.Config": a lowercase RFC 1123 subdomain must consist of')
    )


@pytest.mark.parametrize(
    "obj",
    [pytest.param("x", id="string"), pytest.param({"metadata": "x"}, id="metadata-string")],
)
def test_malformed_objects_become_errors(obj: Any) -> None:
    for rt in kinds.SERVED:
        assert validation.validate_create(rt, obj)[0].type == "FieldValueTypeInvalid"
        assert validation.validate_update(rt, obj, {})[0].type == "FieldValueTypeInvalid"
        assert validation.validate_status_update(rt, obj, {})[0].type == "FieldValueTypeInvalid"


_OLD = make_claim().uid("u1").set("metadata.creationTimestamp", "2026-01-01T00:00:00Z").obj()


def _with_meta(**changes: Any) -> Obj:
    new = make_claim().obj()
    new["metadata"] = {**_OLD["metadata"], **changes}
    return new


@pytest.mark.parametrize(
    ("new", "old", "causes"),
    [
        pytest.param(_with_meta(), _OLD, [], id="unchanged"),
        pytest.param(_with_meta(labels={"a": "b"}), _OLD, [], id="labels-changed"),
        pytest.param(_with_meta(name="other"), _OLD, [(INV, "metadata.name")], id="name"),
        pytest.param(
            _with_meta(namespace="other"), _OLD, [(INV, "metadata.namespace")], id="namespace"
        ),
        pytest.param(_with_meta(uid="u2"), _OLD, [(INV, "metadata.uid")], id="uid"),
        pytest.param(
            _with_meta(creationTimestamp="2020-01-01T00:00:00Z"),
            _OLD,
            [(INV, "metadata.creationTimestamp")],
            id="creation-timestamp",
        ),
        pytest.param(
            _with_meta(deletionTimestamp="2020-01-01T00:00:00Z"),
            _OLD,
            [(INV, "metadata.deletionTimestamp")],
            id="deletion-timestamp-set-by-client",
        ),
        pytest.param(
            _with_meta(generation=1),
            {**_OLD, "metadata": {**_OLD["metadata"], "generation": 2}},
            [(INV, "metadata.generation")],
            id="generation-decremented",
        ),
        pytest.param(
            _with_meta(deletionTimestamp="2026-02-01T00:00:00Z", finalizers=["a.io/x", "a.io/new"]),
            {
                **_OLD,
                "metadata": {
                    **_OLD["metadata"],
                    "deletionTimestamp": "2026-02-01T00:00:00Z",
                    "finalizers": ["a.io/x"],
                },
            },
            [(FORB, "metadata.finalizers")],
            id="no-new-finalizers-while-deleting",
        ),
        pytest.param(
            _with_meta(deletionTimestamp="2026-02-01T00:00:00Z", finalizers=[]),
            {
                **_OLD,
                "metadata": {
                    **_OLD["metadata"],
                    "deletionTimestamp": "2026-02-01T00:00:00Z",
                    "finalizers": ["a.io/x"],
                },
            },
            [],
            id="finalizers-removed-while-deleting",
        ),
    ],
)
def test_object_meta_update(new: Obj, old: Obj, causes: list[tuple[str, str]]) -> None:
    assert _causes(validation.validate_update(kinds.RESOURCE_CLAIMS, new, old)) == causes


def test_server_fields_omitted_by_client_are_not_errors() -> None:
    new = make_claim().obj()
    del new["metadata"]["uid"]
    assert validation.validate_update(kinds.RESOURCE_CLAIMS, new, _OLD) == []


def test_status_update_checks_metadata_too() -> None:
    old = make_class().obj()
    new = make_class().obj()
    new["metadata"] = {**old["metadata"], "name": "renamed", "labels": {"x": "-bad"}}
    causes = _causes(validation.validate_status_update(kinds.RESOURCE_CLASSES, new, old))
    assert causes == [(INV, "metadata.name"), (INV, "metadata.labels")]
