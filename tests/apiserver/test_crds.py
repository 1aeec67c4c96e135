"""CustomResourceDefinitions and the custom resources they serve, through the in-process
registry: CRD validation, NamesAccepted/Established, schema validation (422 with upstream's
field paths), defaulting and pruning, the status and scale subresources, versions with
conversion None, RBAC on the plural, informers by group/version/resource and the cleanup of a
deleted CRD's resources."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import crd, errors, kinds
from draplane.api.auth import UserInfo
from draplane.api.kinds import ResourceType
from draplane.apiserver.crdopenapi import crd_openapi_v3
from draplane.client.informer import InformerFactory
from draplane.client.local import LocalClient
from draplane.testing.apistate import wait_for
from draplane.testing.cluster import Cluster
from draplane.testing.crds import make_crd, make_widget
from draplane.testing.rbacbuilders import make_role, make_role_binding

CRDS = kinds.CUSTOM_RESOURCE_DEFINITIONS
WIDGETS = ResourceType("example.com", "v1", "widgets", "Widget", True, "widget")
WIDGETS_V2 = ResourceType("example.com", "v2", "widgets", "Widget", True, "widget")


@pytest.fixture
async def served(cluster: Cluster) -> LocalClient:
    """An admin client, with the widgets CRD (v1 storage, v2 served) established."""
    client = cluster.client()
    await client.create(CRDS, make_crd(versions=("v1", "v2"), short_names=("wd",)))
    return client


def _bad_crd(change: Any) -> dict[str, Any]:
    obj = make_crd()
    change(obj)
    return obj


def _schema(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


SCHEMA = "spec.versions[0].schema.openAPIV3Schema"

CRD_CASES = [
    pytest.param(
        make_crd(name="gadgets.example.com"),
        'metadata.name: Invalid value: "gadgets.example.com": must be '
        'spec.names.plural+"."+spec.group',
        id="name-not-plural-dot-group",
    ),
    pytest.param(
        make_crd(group="example", name="widgets.example"),
        'spec.group: Invalid value: "example": should be a domain with at least one dot',
        id="group-without-dot",
    ),
    pytest.param(
        make_crd(group="resource.k8s.io", name="widgets.resource.k8s.io"),
        "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups "
        'must have approval annotation "api-approved.kubernetes.io"',
        id="protected-group",
    ),
    pytest.param(
        _bad_crd(lambda o: o["spec"]["names"].update(listKind="Widget")),
        'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',
        id="kind-equals-list-kind",
    ),
    pytest.param(
        _bad_crd(lambda o: o["spec"]["names"].pop("kind")),
        "spec.names.kind: Required value",
        id="no-kind",
    ),
    pytest.param(
        make_crd(short_names=("Bad_Name",)),
        'spec.names.shortNames[0]: Invalid value: "Bad_Name"',
        id="bad-short-name",
    ),
    pytest.param(
        _bad_crd(lambda o: o["spec"].update(scope="Global")),
        'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        id="bad-scope",
    ),
    pytest.param(
        make_crd(versions=("v1", "v2"), storage="v3"),
        "must have exactly one version marked as storage version",
        id="no-storage-version",
    ),
    pytest.param(
        _bad_crd(lambda o: o["spec"]["versions"][0].pop("schema")),
        f"{SCHEMA}: Required value: schemas are required",
        id="no-schema",
    ),
    pytest.param(
        _bad_crd(lambda o: _schema(o)["properties"]["spec"]["properties"]["size"].pop("type")),
        f"{SCHEMA}.properties[spec].properties[size].type: Required value: must not be empty "
        "for specified object fields",
        id="untyped-field",
    ),
    pytest.param(
        _bad_crd(
            lambda o: _schema(o)["properties"]["spec"].update(
                additionalProperties={"type": "string"}
            )
        ),
        f"{SCHEMA}.properties[spec].additionalProperties: Forbidden: additionalProperties and "
        "properties are mutual exclusive",
        id="additional-properties-beside-properties",
    ),
    pytest.param(
        _bad_crd(
            lambda o: _schema(o)["properties"].update(
                metadata={"type": "object", "properties": {"labels": {"type": "object"}}}
            )
        ),
        f"{SCHEMA}.properties[metadata]: Forbidden: must not specify anything other than name "
        "and generateName",
        id="metadata-restricted",
    ),
    pytest.param(
        _bad_crd(
            lambda o: _schema(o)["properties"]["spec"]["properties"]["tags"].update(
                uniqueItems=True
            )
        ),
        "uniqueItems: Forbidden: uniqueItems cannot be set to true",
        id="unique-items",
    ),
]


HOSTILE_CRDS = [
    pytest.param(
        lambda o: o["spec"]["names"].update(shortNames=5),
        "spec.names.shortNames: Invalid value: 5: must be a list",
        id="short-names-not-a-list",
    ),
    pytest.param(
        lambda o: o["spec"].update(versions="v1"),
        'spec.versions: Invalid value: "v1": must be a list',
        id="versions-not-a-list",
    ),
    pytest.param(
        lambda o: o["spec"]["versions"][0].update(
            additionalPrinterColumns=[
                {"name": "x", "type": "string", "jsonPath": ".a", "priority": "x"}
            ]
        ),
        'spec.versions[0].additionalPrinterColumns[0].priority: Invalid value: "x": must be an '
        "integer",
        id="column-priority-not-an-integer",
    ),
    pytest.param(
        lambda o: _schema(o)["properties"]["spec"].update(required="size"),
        f'{SCHEMA}.properties[spec].required: Invalid value: "size": must be a list of strings',
        id="required-not-a-list",
    ),
    pytest.param(
        lambda o: _schema(o)["properties"]["spec"].update(properties=["size"]),
        f"{SCHEMA}.properties[spec].properties: Invalid value:",
        id="properties-not-a-map",
    ),
    pytest.param(
        lambda o: _schema(o)["properties"]["spec"]["properties"]["replicas"].update(minimum="1"),
        f'{SCHEMA}.properties[spec].properties[replicas].minimum: Invalid value: "1": must be a '
        "number",
        id="minimum-not-a-number",
    ),
]


@pytest.mark.parametrize(("change", "message"), HOSTILE_CRDS)
async def test_hostile_crds_are_422(cluster: Cluster, change: Any, message: str) -> None:
    with pytest.raises(errors.StatusError) as caught:
        await cluster.client().create(CRDS, _bad_crd(change))

    assert caught.value.code == 422
    assert message in caught.value.message
    assert (await cluster.client().list(CRDS))["items"] == []


@pytest.mark.parametrize(("obj", "message"), CRD_CASES)
async def test_crd_validation(cluster: Cluster, obj: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.StatusError) as caught:
        await cluster.client().create(CRDS, obj)

    assert caught.value.code == 422
    assert message in caught.value.message
    assert (await cluster.client().list(CRDS))["items"] == []


async def test_crd_is_established_with_accepted_names(served: LocalClient) -> None:
    stored = await served.get(CRDS, "widgets.example.com")

    conditions = {c["type"]: (c["status"], c["reason"]) for c in stored["status"]["conditions"]}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    assert stored["status"]["acceptedNames"] == {
        "plural": "widgets",
        "singular": "widget",
        "kind": "Widget",
        "listKind": "WidgetList",
        "shortNames": ["wd"],
    }
    assert stored["status"]["storedVersions"] == ["v1"]
    assert stored["metadata"]["finalizers"] == [crd.CLEANUP_FINALIZER]
    assert stored["spec"]["conversion"] == {"strategy": "None"}


async def test_conflicting_names_are_not_accepted_until_they_are_free(served: LocalClient) -> None:
    other = make_crd(plural="gizmos", kind="Widget")
    other["spec"]["names"]["singular"] = "gizmo"
    created = await served.create(CRDS, other)

    conditions = {c["type"]: (c["status"], c["reason"]) for c in created["status"]["conditions"]}
    assert conditions == {
        "NamesAccepted": ("False", "KindConflict"),
        "Established": ("False", "NotAccepted"),
    }
    gizmos = ResourceType("example.com", "v1", "gizmos", "Widget", True, "gizmo")
    with pytest.raises(errors.StatusError) as caught:
        await served.list(gizmos, "default")
    assert caught.value.code == 404

    await served.delete(CRDS, "widgets.example.com")

    async def served_now() -> bool:
        try:
            return (await served.list(gizmos, "default"))["items"] == []
        except errors.StatusError:
            return False

    await wait_for(served_now)
    assert crd.is_established(await served.get(CRDS, "gizmos.example.com"))


WIDGET_CASES = [
    pytest.param(
        {"replicas": "three"},
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
        'integer: "string"',
        id="type",
    ),
    pytest.param(
        {"size": "medium"},
        'spec.size: Unsupported value: "medium": supported values: "small", "large"',
        id="enum",
    ),
    pytest.param(
        {"replicas": 11},
        "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal "
        "to 10",
        id="maximum",
    ),
    pytest.param(
        {"color": "Red1"},
        "spec.color: Invalid value: \"Red1\": spec.color in body should match '^[a-z]+$'",
        id="pattern",
    ),
    pytest.param({"tags": ["a", "a"]}, 'spec.tags[1]: Duplicate value: "a"', id="list-type-set"),
    pytest.param(
        {"tags": ["a", "b", "c", "d"]},
        "spec.tags: Too many: must have at most 3 items",
        id="max-items",
    ),
    pytest.param(
        {"port": True},
        'spec.port: Invalid value: "boolean": spec.port in body must be of type '
        'integer-or-string: "boolean"',
        id="int-or-string",
    ),
    pytest.param(
        {"when": "yesterday"},
        'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time',
        id="format",
    ),
    pytest.param(
        {"labels": {"a": 1}},
        'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string',
        id="additional-properties",
    ),
]


@pytest.mark.parametrize(("spec", "message"), WIDGET_CASES)
async def test_invalid_custom_resources_are_422_with_field_paths(
    served: LocalClient, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(errors.StatusError) as caught:
        await served.create(WIDGETS, make_widget(**spec))

    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    assert caught.value.message.startswith('Widget.example.com "w" is invalid: ')
    assert message in caught.value.message
    assert (await served.list(WIDGETS, "default"))["items"] == []


async def test_required_field_and_valid_resource(served: LocalClient) -> None:
    body = make_widget(port="http", when=None, tags=["a"], extra={"any": {"thing": 1}})
    del body["spec"]["size"]
    with pytest.raises(errors.StatusError) as caught:
        await served.create(WIDGETS, body)
    body["spec"]["size"] = "large"
    created = await served.create(WIDGETS, body)

    assert "spec.size: Required value" in caught.value.message
    assert created["spec"]["port"] == "http" and created["spec"]["when"] is None
    assert created["spec"]["extra"] == {"any": {"thing": 1}}


async def test_defaults_and_pruning(served: LocalClient) -> None:
    body = make_widget(unknown="dropped")
    body["topLevel"] = {"also": "dropped"}
    body["status"] = {"phase": "ignored on create"}

    created = await served.create(WIDGETS, body)

    assert created["spec"] == {"size": "small", "replicas": 1}
    assert "topLevel" not in created and "status" not in created
    stored = await served.get(WIDGETS, "w", "default")
    assert stored["spec"] == {"size": "small", "replicas": 1}


async def test_defaults_apply_as_objects_are_read(served: LocalClient) -> None:
    await served.create(WIDGETS, make_widget())
    crd_obj = await served.get(CRDS, "widgets.example.com")
    for version in crd_obj["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        spec["properties"]["mode"] = {"type": "string", "default": "auto"}
    await served.update(CRDS, crd_obj)

    read = await served.get(WIDGETS, "w", "default")
    listed = await served.list(WIDGETS_V2, "default")

    assert read["spec"]["mode"] == "auto"
    assert [i["spec"]["mode"] for i in listed["items"]] == ["auto"]


async def test_strategic_merge_patch_is_unsupported(served: LocalClient) -> None:
    await served.create(WIDGETS, make_widget())

    with pytest.raises(errors.StatusError) as caught:
        await served.patch(
            WIDGETS, "w", {"spec": {"size": "large"}}, "default", patch_type="strategic"
        )

    assert (caught.value.code, caught.value.reason) == (415, "UnsupportedMediaType")
    assert "application/merge-patch+json" in caught.value.message


async def test_status_subresource_splits_spec_and_status(served: LocalClient) -> None:
    await served.create(WIDGETS, make_widget())

    main = await served.patch(
        WIDGETS,
        "w",
        {"spec": {"size": "large"}, "status": {"phase": "ignored"}},
        "default",
        patch_type="merge",
    )
    status = await served.patch(
        WIDGETS,
        "w",
        {"spec": {"size": "small"}, "status": {"phase": "Ready", "replicas": 1}},
        "default",
        subresource="status",
        patch_type="merge",
    )
    with pytest.raises(errors.StatusError) as caught:
        await served.patch(
            WIDGETS, "w", {"status": {"replicas": "x"}}, "default", subresource="status"
        )

    assert main["spec"]["size"] == "large" and "status" not in main
    assert main["metadata"]["generation"] == 2
    assert status["spec"]["size"] == "large"
    assert status["status"] == {"phase": "Ready", "replicas": 1}
    assert status["metadata"]["generation"] == 2
    assert caught.value.code == 422 and "status.replicas" in caught.value.message


async def test_scale_subresource(served: LocalClient) -> None:
    await served.create(WIDGETS, make_widget(selector="app=w"))
    await served.patch(WIDGETS, "w", {"status": {"replicas": 1}}, "default", subresource="status")

    scale = await served.get(WIDGETS, "w", "default", subresource="scale")
    scaled = await served.patch(
        WIDGETS, "w", {"spec": {"replicas": 3}}, "default", subresource="scale"
    )
    with pytest.raises(errors.StatusError) as caught:
        await served.patch(WIDGETS, "w", {"spec": {"replicas": -1}}, "default", subresource="scale")

    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 1, "selector": "app=w"}
    assert scaled["spec"] == {"replicas": 3}
    assert caught.value.code == 422
    stored = await served.get(WIDGETS, "w", "default")
    assert stored["spec"]["replicas"] == 3 and stored["metadata"]["generation"] == 2


async def test_versions_with_conversion_none(served: LocalClient, cluster: Cluster) -> None:
    created = await served.create(WIDGETS_V2, make_widget(version="v2"))

    as_v1 = await served.get(WIDGETS, "w", "default")
    listed = await served.list(WIDGETS_V2, "default")
    stored, _ = await cluster.storage.list(WIDGETS.key)

    assert created["apiVersion"] == "example.com/v2"
    assert as_v1["apiVersion"] == "example.com/v1"
    assert [i["apiVersion"] for i in listed["items"]] == ["example.com/v2"]
    assert [o["apiVersion"] for o in stored] == ["example.com/v1"]


async def test_rbac_on_the_plural_in_the_crd_group(served: LocalClient, cluster: Cluster) -> None:
    await served.create(
        kinds.ROLES,
        make_role("widget-reader", "default")
        .rule(["get", "list"], ["example.com"], ["widgets"])
        .obj(),
    )
    await served.create(
        kinds.ROLE_BINDINGS,
        make_role_binding("read", "default").role("Role", "widget-reader").user("alice").obj(),
    )
    await served.create(WIDGETS, make_widget())
    alice = cluster.client(UserInfo("alice", "", ("system:authenticated",)))
    assert await cluster.registry.watch_cache.wait_until_fresh(cluster.storage.revision, 5.0)

    listed = await alice.list(WIDGETS, "default")
    with pytest.raises(errors.StatusError) as caught:
        await alice.delete(WIDGETS, "w", "default")

    assert [i["metadata"]["name"] for i in listed["items"]] == ["w"]
    assert caught.value.code == 403
    assert 'cannot delete resource "widgets" in API group "example.com"' in caught.value.message


async def test_informer_by_group_version_resource(served: LocalClient) -> None:
    factory = InformerFactory(served)
    informer = await factory.for_resource("example.com", "v1", "widgets")
    await factory.start()
    try:
        await factory.wait_synced()
        await served.create(WIDGETS, make_widget("a"))

        async def seen() -> bool:
            return [o["metadata"]["name"] for o in informer.lister.list()] == ["a"]

        await wait_for(seen)
    finally:
        await factory.stop()
    with pytest.raises(errors.StatusError) as caught:
        await factory.for_resource("example.com", "v1", "gizmos")
    assert caught.value.code == 404


async def test_deleting_the_crd_deletes_its_resources_and_stops_serving(
    served: LocalClient, cluster: Cluster
) -> None:
    await served.create(WIDGETS, make_widget("a"))
    await served.create(WIDGETS, make_widget("b", "kube-system"))

    await served.patch(WIDGETS, "a", {"metadata": {"finalizers": ["example.com/hold"]}}, "default")

    await served.delete(CRDS, "widgets.example.com")

    async def terminating() -> bool:
        held = await served.get(CRDS, "widgets.example.com")
        return ("Terminating", "True") in {
            (c["type"], c["status"]) for c in held["status"]["conditions"]
        }

    await wait_for(terminating)
    with pytest.raises(errors.StatusError) as refused:
        await served.create(WIDGETS, make_widget("c"))
    assert (refused.value.code, refused.value.message) == (
        405,
        "create not allowed while custom resource definition is terminating",
    )
    assert (await served.get(WIDGETS, "a", "default"))["metadata"]["deletionTimestamp"]
    await served.patch(WIDGETS, "a", {"metadata": {"finalizers": []}}, "default")

    async def gone() -> bool:
        crds, _ = await cluster.storage.list(CRDS.key)
        return not crds and not cluster.registry.kinds.custom()

    await wait_for(gone)
    assert (await cluster.storage.list(WIDGETS.key))[0] == []
    with pytest.raises(errors.StatusError) as caught:
        await served.list(WIDGETS)
    assert (caught.value.code, caught.value.message) == (
        404,
        "the server could not find the requested resource",
    )


async def test_openapi_v3_schemas_of_established_crds(
    served: LocalClient, cluster: Cluster
) -> None:
    docs = crd_openapi_v3(cluster.registry.kinds)

    assert sorted(docs) == ["apis/example.com/v1", "apis/example.com/v2"]
    schemas = docs["apis/example.com/v1"]["components"]["schemas"]
    assert sorted(schemas) == ["com.example.v1.Widget", "com.example.v1.WidgetList"]
    widget = schemas["com.example.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "Widget", "version": "v1"}
    ]
    assert widget["properties"]["spec"]["required"] == ["size"]
    assert widget["properties"]["metadata"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    }
