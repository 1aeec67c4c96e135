"""The schema package: every served kind has a schema whose references resolve; decoding finds
unknown fields at any depth; normalizing writes what the Go types always serialize."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds, schema
from draplane.api.schema import model
from draplane.testing.builders import make_claim, make_node, make_pod


def _leaf(t: model.Type) -> model.Type:
    while isinstance(t, model.Arr | model.Map):
        t = t.item if isinstance(t, model.Arr) else t.value
    return t


def test_every_served_kind_has_a_schema_and_every_type_resolves() -> None:
    assert [
        rt.kind
        for rt in kinds.SERVED
        if schema.for_resource(schema.schemas_for(), rt) is schema.GENERIC
    ] == []
    structs = model.structs()
    unresolved = [
        (name, fld.name, leaf)
        for name, struct in structs.items()
        for fld in struct.fields
        if (leaf := _leaf(fld.type))
        and leaf not in structs
        and leaf not in model.PRIMITIVES
        and leaf not in model.SPECIAL
        and leaf not in model.FREE
    ]
    assert unresolved == []


@pytest.mark.parametrize(
    ("rt", "obj", "unknown"),
    [
        pytest.param(kinds.CONFIGMAPS, {"metadata": {}, "dta": {}}, ["dta"], id="top-level"),
        pytest.param(
            kinds.RESOURCE_CLAIMS,
            make_claim().obj() | {"spec": {"resourceClassNmae": "x"}},
            ["spec.resourceClassNmae"],
            id="nested",
        ),
        pytest.param(
            kinds.PODS,
            make_pod().obj() | {"spec": {"containers": [{"name": "a"}, {"name": "b", "x": 1}]}},
            ["spec.containers[1].x"],
            id="list-item",
        ),
        pytest.param(
            kinds.PODS,
            {"metadata": {"labels": {"a": "b"}, "namee": "x"}},
            ["metadata.namee"],
            id="metadata",
        ),
        pytest.param(
            kinds.ROLES,
            {"metadata": {}, "rules": [{"verbs": ["get"], "resource": ["pods"]}]},
            ["rules[0].resource"],
            id="rbac-rule",
        ),
        pytest.param(
            kinds.PODS,
            {"spec": {"volumes": [{"name": "v", "cinder": {"volumeID": "x", "anything": 1}}]}},
            ["spec.volumes[0].cinder.anything"],
            id="typed-in-tree-source",
        ),
        pytest.param(
            kinds.PERSISTENT_VOLUME_CLAIMS,
            {"status": {"conditions": [{"type": "Resizing", "status": "True", "reasn": "x"}]}},
            ["status.conditions[0].reasn"],
            id="typed-claim-status",
        ),
        pytest.param(
            kinds.PODS,
            {"spec": {"volumes": [{"name": "v", "csi": {"driver": "d", "anything": 1}}]}},
            ["spec.volumes[0].csi.anything"],
            id="typed-volume-source",
        ),
        pytest.param(
            kinds.NODES,
            {"metadata": {"managedFields": [{"fieldsV1": {"f:spec": {}}}]}},
            [],
            id="fields-v1-is-free-form",
        ),
        pytest.param(
            kinds.CUSTOM_RESOURCE_DEFINITIONS,
            {
                "spec": {
                    "names": {"plural": "widgets", "kind": "Widget", "shortName": ["w"]},
                    "versions": [
                        {
                            "name": "v1",
                            "schema": {"openAPIV3Schema": {"type": "object", "x-any": 1}},
                            "subresources": {"scale": {"specReplicas": ".spec.r"}},
                        }
                    ],
                },
                "status": {"acceptedNames": {"plural": "w"}, "storedVersion": ["v1"]},
            },
            [
                "spec.names.shortName",
                "spec.versions[0].subresources.scale.specReplicas",
                "status.storedVersion",
            ],
            id="crd-openapi-v3-schema-is-free-form",
        ),
    ],
)
def test_decode_finds_unknown_fields(
    rt: kinds.ResourceType, obj: dict[str, Any], unknown: list[str]
) -> None:
    base = schema.schemas_for()
    found = schema.decode(base, schema.for_resource(base, rt), obj, prune=True)
    assert found.unknown == unknown
    assert schema.decode(base, schema.for_resource(base, rt), obj).unknown == []  # pruned


@pytest.mark.parametrize(
    ("rt", "obj", "path", "expected"),
    [
        pytest.param(kinds.RESOURCE_CLAIMS, make_claim().obj(), ("status",), {}, id="claim-status"),
        pytest.param(
            kinds.PODS,
            make_pod().obj(),
            ("spec", "containers", 0, "resources"),
            {},
            id="container-resources",
        ),
        pytest.param(kinds.PODS, make_pod().obj(), ("status",), {}, id="pod-status"),
        pytest.param(
            kinds.PODS,
            make_pod().obj() | {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            ("status", "conditions", 0, "lastProbeTime"),
            None,
            id="condition-time-null",
        ),
        pytest.param(
            kinds.NODES,
            make_node().obj(),
            ("status", "daemonEndpoints"),
            {"kubeletEndpoint": {"Port": 0}},
            id="node-daemon-endpoints",
        ),
        pytest.param(
            kinds.RESOURCE_CLAIM_TEMPLATES,
            {"metadata": {"name": "t"}, "spec": {"spec": {"resourceClassName": "c"}}},
            ("spec", "metadata"),
            {"creationTimestamp": None},
            id="template-metadata",
        ),
        pytest.param(
            kinds.EVENTS,
            {"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"}},
            ("reportingComponent",),
            "",
            id="event-no-omitempty",
        ),
        pytest.param(kinds.EVENTS, {"metadata": {}}, ("source",), {}, id="event-source"),
        pytest.param(kinds.LEASES, {"metadata": {}}, ("spec",), {}, id="lease-spec"),
        pytest.param(kinds.NAMESPACES, {"metadata": {}}, ("spec",), {}, id="namespace-spec"),
        pytest.param(
            kinds.PODS,
            {"spec": {"resourceClaims": [{"name": "gpu"}]}},
            ("spec", "resourceClaims", 0, "source"),
            {},
            id="pod-claim-source",
        ),
    ],
)
def test_normalize_writes_what_go_serializes(
    rt: kinds.ResourceType, obj: dict[str, Any], path: tuple[Any, ...], expected: Any
) -> None:
    base = schema.schemas_for()
    schema.normalize(base, schema.for_resource(base, rt), obj)
    node: Any = obj
    for key in path:
        node = node[key]
    assert node == expected


def test_normalize_drops_null_omitempty_fields_and_keeps_the_rest() -> None:
    claim = make_claim().obj()
    claim["spec"]["parametersRef"] = None
    base = schema.schemas_for()
    schema.normalize(base, schema.for_resource(base, kinds.RESOURCE_CLAIMS), claim)
    assert "parametersRef" not in claim["spec"]
    assert claim["spec"]["resourceClassName"] == make_claim().obj()["spec"]["resourceClassName"]


def test_a_kind_registers_and_unregisters_its_schema() -> None:
    name = schema.struct(
        "io.example.v1.Widget",
        "A widget.",
        *schema.meta.type_meta(),
        schema.meta.metadata_field(),
        schema.f("size", "int32", "How big.", required=True),
    )
    try:
        schema.serve("example.io", "v1", "Widget", name)
        base = schema.schemas_for()
        widget = base.kind_struct("example.io", "v1", "Widget")
        assert widget is not None and widget.by_name["size"].required
        list_struct = base.kind_struct("example.io", "v1", "WidgetList")
        assert list_struct is not None and list_struct.by_name["items"].type == schema.Arr(name)
        found = schema.decode(base, widget, {"metadata": {}, "size": "big", "colour": 1})
        assert (found.unknown, [e.path for e in found.errors]) == (["colour"], ["size"])
    finally:
        schema.unregister_kind("example.io", "v1", "Widget")
        schema.unregister_kind("example.io", "v1", "WidgetList")
        model.unregister_struct(name)
        model.unregister_struct(name + "List")
    assert schema.schemas_for().kind_struct("example.io", "v1", "Widget") is None
