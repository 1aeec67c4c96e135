"""The real kubectl binaries and a CustomResourceDefinition: `apply` of the CRD and of a custom
resource in one manifest (discovery picks up the new group), `get` through the short name with
the CRD's printer columns, `scale` through the scale subresource, `get crd`, and `explain` of
the custom resource's fields from the CRD's /openapi/v3 document."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from draplane.api.kinds import ResourceType
from draplane.testing.crds import make_crd, make_widget
from draplane.testing.httpserver import HttpServer
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl

if not any(kubectl_binary(v) for v in VERSIONS):
    pytest.skip("no versioned kubectl binaries installed", allow_module_level=True)

WIDGETS = ResourceType("example.com", "v1", "widgets", "Widget", True, "widget")
COLUMNS = [
    {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
    {"name": "Phase", "type": "string", "jsonPath": ".status.phase", "priority": 1},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


async def test_apply_get_and_scale_a_custom_resource(
    kubectl: Kubectl, server: HttpServer, tmp_path: Path
) -> None:
    crd_manifest = tmp_path / "crd.yaml"
    crd_manifest.write_text(yaml.safe_dump(make_crd(short_names=("wd",), columns=COLUMNS)))
    widget_manifest = tmp_path / "widget.yaml"
    widget_manifest.write_text(yaml.safe_dump(make_widget("big", size="large", replicas=2)))

    applied_crd = await kubectl.run("apply", "-f", str(crd_manifest))
    applied = await kubectl.run("apply", "-f", str(widget_manifest))
    scaled = await kubectl.run("scale", "wd", "big", "--replicas=5")
    table = await kubectl.run("get", "wd")
    crds = await kubectl.run("get", "crd")
    explained = await kubectl.run("explain", "widgets.spec")

    assert applied_crd.strip() == (
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
    )
    assert applied.strip() == "widget.example.com/big created"
    assert scaled.strip() == "widget.example.com/big scaled"
    header, row = table.strip().splitlines()
    assert header.split() == ["NAME", "SIZE", "REPLICAS", "AGE"]
    assert row.split()[:3] == ["big", "large", "5"]
    assert crds.strip().splitlines()[0].split() == ["NAME", "CREATED", "AT"]
    assert crds.strip().splitlines()[1].split()[0] == "widgets.example.com"
    assert "KIND:" in explained and "Widget" in explained
    assert "FIELD: spec <Object>" in explained or "RESOURCE: spec <Object>" in explained
    listed = explained.split("FIELDS:")[1].splitlines()
    fields = {line.split()[0] for line in listed if line.strip()}
    assert {"size", "replicas", "selector"} <= fields
    stored = await server.client().get(WIDGETS, "big", "default")
    assert stored["spec"]["replicas"] == 5


async def test_apply_of_a_resource_that_breaks_a_validation_rule(
    kubectl: Kubectl, server: HttpServer, tmp_path: Path
) -> None:
    crd_obj = make_crd(scale=False)
    spec = crd_obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"] = [
        {"rule": "self.size != 'large' || self.replicas >= 2", "message": "large needs 2"}
    ]
    crd_manifest = tmp_path / "crd.yaml"
    crd_manifest.write_text(yaml.safe_dump(crd_obj))
    widget_manifest = tmp_path / "widget.yaml"
    widget_manifest.write_text(yaml.safe_dump(make_widget("big", size="large", replicas=1)))

    applied_crd = await kubectl.run("apply", "-f", str(crd_manifest))
    refused = await kubectl.run("apply", "-f", str(widget_manifest), check=False)

    assert applied_crd.strip() == (
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
    )
    assert 'The Widget "big" is invalid: spec: Invalid value: "object": large needs 2' in refused
    listed = await server.client().list(WIDGETS, "default")
    assert listed["items"] == []
