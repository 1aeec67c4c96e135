"""Builders of CustomResourceDefinitions and custom resources for tests."""

from __future__ import annotations

import copy
from typing import Any

from draplane.api.meta import Obj

WIDGET_SCHEMA: Obj = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "string", "enum": ["small", "large"]},
                "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
                "color": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 10},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {
                    "type": "array",
                    "maxItems": 3,
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string", "minLength": 1},
                },
                "selector": {"type": "string"},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "when": {"type": "string", "format": "date-time", "nullable": True},
            },
            "x-kubernetes-validations": [{"rule": "self.replicas <= 10"}],
        },
        "status": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "phase": {"type": "string"}},
        },
    },
}


def make_crd(
    *,
    group: str = "example.com",
    plural: str = "widgets",
    kind: str = "Widget",
    scope: str = "Namespaced",
    versions: tuple[str, ...] = ("v1",),
    storage: str = "",
    schema: Obj | None = None,
    short_names: tuple[str, ...] = (),
    status: bool = True,
    scale: bool = True,
    columns: list[Obj] | None = None,
    name: str = "",
) -> Obj:
    subresources: dict[str, Any] = {}
    if status:
        subresources["status"] = {}
    if scale:
        subresources["scale"] = {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".spec.selector",
        }
    storage = storage or versions[0]
    version_list = []
    for v in versions:
        entry: Obj = {
            "name": v,
            "served": True,
            "storage": v == storage,
            "schema": {"openAPIV3Schema": copy.deepcopy(schema or WIDGET_SCHEMA)},
        }
        if subresources:
            entry["subresources"] = copy.deepcopy(subresources)
        if columns is not None:
            entry["additionalPrinterColumns"] = columns
        version_list.append(entry)
    names: Obj = {"plural": plural, "kind": kind}
    if short_names:
        names["shortNames"] = list(short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name or f"{plural}.{group}"},
        "spec": {"group": group, "names": names, "scope": scope, "versions": version_list},
    }


def make_widget(
    name: str = "w", namespace: str = "default", *, version: str = "v1", **spec: Any
) -> Obj:
    obj: Obj = {
        "apiVersion": f"example.com/{version}",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": "small", **spec},
    }
    if namespace:
        obj["metadata"]["namespace"] = namespace
    return obj
