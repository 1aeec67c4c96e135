"""Structural-schema pruning, defaulting and validation of custom resources (api.structural),
table-driven against the messages apiextensions-apiserver returns."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import structural

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
                "ratio": {"type": "number", "maximum": 1, "exclusiveMaximum": True},
                "name": {"type": "string", "minLength": 2},
                "note": {"type": "string", "nullable": True},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"},
                        },
                    },
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {
                        "spec": {"type": "object", "properties": {"a": {"type": "string"}}}
                    },
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    },
}


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        pytest.param(
            {"count": 1},
            ["spec.count: Invalid value: 1: spec.count in body should be greater than 1"],
            id="exclusive-minimum",
        ),
        pytest.param(
            {"ratio": 1},
            ["spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"],
            id="exclusive-maximum",
        ),
        pytest.param(
            {"name": "a"},
            ['spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'],
            id="min-length",
        ),
        pytest.param({"note": None}, [], id="nullable"),
        pytest.param(
            {"name": None},
            ['spec.name: Invalid value: "null": spec.name in body must be of type string: "null"'],
            id="null-not-nullable",
        ),
        pytest.param(
            {"ports": [{"port": 80}, {"port": 80, "protocol": "UDP"}]},
            ['spec.ports[1]: Duplicate value: map[string]interface {}{"port":80}'],
            id="list-type-map",
        ),
        pytest.param(
            {"template": {"spec": {}}},
            [
                "spec.template.apiVersion: Required value: must not be empty",
                "spec.template.kind: Required value: must not be empty",
            ],
            id="embedded-resource",
        ),
        pytest.param({"count": 2.0, "ratio": 0.5, "free": {"x": [1]}}, [], id="valid"),
    ],
)
def test_validate(spec: dict[str, Any], messages: list[str]) -> None:
    errs = structural.validate(SCHEMA, {"apiVersion": "x/v1", "kind": "X", "spec": spec})

    assert [f"{e.field}: {e.message()}" for e in errs] == messages


def test_prune_and_default() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "a"},
        "spec": {
            "ports": [{"port": 80, "junk": 1}],
            "template": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"a": "b", "c": "d"},
            },
            "free": {"anything": {"goes": True}},
            "unknown": 1,
        },
        "extra": 1,
    }

    structural.prune(SCHEMA, obj)
    structural.default(SCHEMA, obj)

    assert obj == {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "a"},
        "spec": {
            "ports": [{"port": 80, "protocol": "TCP"}],
            "template": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"a": "b"},
            },
            "free": {"anything": {"goes": True}},
        },
    }
