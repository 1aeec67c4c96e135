"""CRD validation rules (`x-kubernetes-validations`) through the in-process registry: the
checks of a CRD write (compile errors, result types, messageExpression, fieldPath, reason,
oldSelf on uncorrelatable nodes, estimated cost, stored expressions on update) with upstream's
field paths and messages, and the evaluation on custom resource writes (messages, reasons,
fieldPath, rules inside arrays and maps, transition rules on update and on status)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from draplane.api import errors, kinds
from draplane.api.kinds import ResourceType
from draplane.apiserver.crdcel import crd_rule_errors
from draplane.apiserver.crdcel.evaluate import compiled_schema
from draplane.client.local import LocalClient
from draplane.testing.cluster import Cluster
from draplane.testing.crds import make_crd

CRDS = kinds.CUSTOM_RESOURCE_DEFINITIONS
WIDGETS = ResourceType("example.com", "v1", "widgets", "Widget", True, "widget")
SPEC = "spec.validation.openAPIV3Schema.properties[spec]"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "min": {"type": "integer"},
                "max": {"type": "integer"},
                "name": {"type": "string", "maxLength": 64},
                "ratio": {"type": "number"},
                "when": {"type": "string", "format": "date-time"},
                "timeout": {"type": "string", "format": "duration"},
                "max-surge": {"type": "integer"},
                "namespace": {"type": "string"},
                "memory": {"type": "string"},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                },
                "port": {"x-kubernetes-int-or-string": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "tags": {
                    "type": "array",
                    "maxItems": 8,
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string", "maxLength": 16},
                },
                "words": {"type": "array", "items": {"type": "string"}},
                "ports": {
                    "type": "array",
                    "maxItems": 8,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string", "maxLength": 16},
                            "number": {"type": "integer"},
                        },
                    },
                },
                "labels": {
                    "type": "object",
                    "maxProperties": 8,
                    "additionalProperties": {"type": "string", "maxLength": 16},
                },
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}


def _schema(spec_rules: list[Any] | None = None, **nested: list[Any]) -> dict[str, Any]:
    """SCHEMA with rules on spec and on spec's properties (`ports_items=[...]` for the
    items of spec.ports, `labels_values=[...]` for the values of spec.labels)."""
    schema = copy.deepcopy(SCHEMA)
    spec = schema["properties"]["spec"]
    if spec_rules is not None:
        spec["x-kubernetes-validations"] = spec_rules
    for key, rules in nested.items():
        prop, _, part = key.partition("_")
        node = spec["properties"][prop]
        if part == "items":
            node = node["items"]
        elif part == "values":
            node = node["additionalProperties"]
        node["x-kubernetes-validations"] = rules
    return schema


def _widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }


async def _serve(cluster: Cluster, schema: dict[str, Any]) -> LocalClient:
    client = cluster.client()
    await client.create(CRDS, make_crd(schema=schema, scale=False))
    return client


async def _invalid(call: Any) -> str:
    with pytest.raises(errors.StatusError) as caught:
        await call
    assert caught.value.code == 422, caught.value
    return caught.value.message


# --- CRD writes -------------------------------------------------------------------------------

GO_RULE = (
    'apiextensions.ValidationRule{{Rule:"{rule}", Message:"", MessageExpression:"{mexp}", '
    'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
    "OptionalOldSelf:(*bool)(nil)}}"
)

CRD_CASES = [
    pytest.param(
        _schema([{"rule": "self.nope == 1"}]),
        f"{SPEC}.x-kubernetes-validations[0].rule: Invalid value: "
        + GO_RULE.format(rule="self.nope == 1", mexp="")
        + ": compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n"
        " | self.nope == 1\n | ....^",
        id="undefined-field",
    ),
    pytest.param(
        _schema([{"rule": "self.min <"}]),
        "compilation failed: ERROR: <input>:1:11: Syntax error: mismatched input '<EOF>'",
        id="syntax-error",
    ),
    pytest.param(
        _schema([{"rule": "nosuch(self.min)"}]),
        "compilation failed: ERROR: <input>:1:7: undeclared reference to 'nosuch'",
        id="unknown-function",
    ),
    pytest.param(
        _schema(name=[{"rule": "self + 'x'"}]),
        f"{SPEC}.properties[name].x-kubernetes-validations[0].rule: Invalid value: "
        + GO_RULE.format(rule="self + 'x'", mexp="")
        + ": cel expression must evaluate to a bool",
        id="not-bool",
    ),
    pytest.param(
        _schema([{"rule": "self.name"}]),
        f"{SPEC}.x-kubernetes-validations[0].rule: Invalid value: "
        + GO_RULE.format(rule="self.name", mexp="")
        + ": cel expression must evaluate to a bool",
        id="field-not-bool",
    ),
    pytest.param(
        _schema([{"rule": "self.min > 0", "messageExpression": "self.min"}]),
        "x-kubernetes-validations[0].messageExpression: Invalid value: "
        + GO_RULE.format(rule="self.min > 0", mexp="self.min")
        + ": must evaluate to a string",
        id="message-expression-field-not-string",
    ),
    pytest.param(
        _schema([{"rule": "self.min > 0", "messageExpression": "self.nope"}]),
        f"{SPEC}.x-kubernetes-validations[0].messageExpression: Invalid value: "
        + GO_RULE.format(rule="self.min > 0", mexp="self.nope")
        + ": messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'",
        id="message-expression-compile",
    ),
    pytest.param(
        _schema(name=[{"rule": "self != ''", "messageExpression": "size(self)"}]),
        "x-kubernetes-validations[0].messageExpression: Invalid value: "
        + GO_RULE.format(rule="self != ''", mexp="size(self)")
        + ": must evaluate to a string",
        id="message-expression-not-string",
    ),
    pytest.param(
        _schema([{"rule": "self.min > 0", "fieldPath": ".nope"}]),
        f'{SPEC}.x-kubernetes-validations[0].fieldPath: Invalid value: ".nope": '
        "fieldPath must be a valid path",
        id="field-path-unknown",
    ),
    pytest.param(
        _schema([{"rule": "self.min > 0", "reason": "FieldValueTooLong"}]),
        f'{SPEC}.x-kubernetes-validations[0].reason: Unsupported value: "FieldValueTooLong": '
        'supported values: "FieldValueDuplicate", "FieldValueForbidden", '
        '"FieldValueInvalid", "FieldValueRequired"',
        id="reason-not-supported",
    ),
    pytest.param(
        _schema([{"rule": "  "}]),
        f"{SPEC}.x-kubernetes-validations[0].rule: Required value: rule is not specified",
        id="rule-empty",
    ),
    pytest.param(
        _schema([{"rule": "self.min > 0", "message": "one\ntwo"}]),
        f'{SPEC}.x-kubernetes-validations[0].message: Invalid value: "one\ntwo": '
        "message must not contain line breaks",
        id="message-line-break",
    ),
    pytest.param(
        _schema(tags_items=[{"rule": "self == oldSelf"}]),
        f"{SPEC}.properties[tags].items.x-kubernetes-validations[0].rule: Invalid value: "
        '"self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema '
        f"within {SPEC}.properties[tags].items",
        id="old-self-in-set",
    ),
    pytest.param(
        _schema(words=[{"rule": "self.all(a, self.all(b, a.contains(b)))"}]),
        f"{SPEC}.properties[words].x-kubernetes-validations[0].rule: Forbidden: estimated rule "
        "cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
        id="cost",
    ),
    pytest.param(
        _schema(words=[{"rule": f"self.all(w, w.size() < {n})"} for n in range(11)]),
        "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule & "
        "messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.",
        id="total-cost",
    ),
]


@pytest.mark.parametrize(("schema", "message"), CRD_CASES)
async def test_crd_with_a_bad_rule_is_rejected(
    cluster: Cluster, schema: dict[str, Any], message: str
) -> None:
    client = cluster.client()
    text = await _invalid(client.create(CRDS, make_crd(schema=schema, scale=False)))
    assert message in text
    assert (await client.list(CRDS))["items"] == []


GOOD_RULES = [
    "self.min <= self.max",
    "!has(self.name) || self.name.startsWith('a')",
    "self.tags.all(t, t.size() < 10) && self.tags.exists(t, t == 'x')",
    "self.tags.map(t, t + '!').filter(t, t.endsWith('!')).size() >= 0",
    "self.tags.isSorted() && self.tags.indexOf('x') >= 0",
    "[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3",
    "self.name.find('[0-9]+') == '' || self.name.findAll('[0-9]').size() > 0",
    "url('https://example.com:8080/x').getPort() == '8080' && isURL('https://a.b')",
    "quantity('1Gi').isGreaterThan(quantity('1Mi')) && isQuantity('5m')",
    "self.name.lowerAscii().split('-').size() > 0",
    "self.labels.all(k, self.labels[k] != '')",
    "has(self.extra.anything) || true",
    "self.port == 80 || self.port == 'http' || true",
    "self.metadata.name == 'w'",
]


async def test_valid_rules_and_library_functions_are_accepted(cluster: Cluster) -> None:
    rules = [{"rule": r} for r in GOOD_RULES[:-1]]
    created = await cluster.client().create(
        CRDS,
        make_crd(schema=_schema(rules), scale=False),
    )
    assert created["metadata"]["name"] == "widgets.example.com"
    # self.metadata is the resource's at the root only.
    root = copy.deepcopy(SCHEMA)
    root["x-kubernetes-validations"] = [{"rule": GOOD_RULES[-1]}]
    assert crd_rule_errors(make_crd(schema=root)) == []


def test_unchanged_rules_are_not_compiled_again_on_update() -> None:
    stored = make_crd(schema=_schema([{"rule": "self.nope == 1"}]))
    updated = copy.deepcopy(stored)
    updated["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ].append({"rule": "self.other == 1"})
    errs = crd_rule_errors(updated, stored)
    assert [e.field for e in errs] == [f"{SPEC}.x-kubernetes-validations[1].rule"]
    assert crd_rule_errors(stored, stored) == []


def test_per_version_schemas_are_reported_at_their_version() -> None:
    crd = make_crd(versions=("v1", "v2"), schema=_schema([{"rule": "self.min > 0"}]))
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.nope > 0"}]
    errs = crd_rule_errors(crd)
    assert [e.field for e in errs] == [
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    ]


# --- custom resource writes -------------------------------------------------------------------

CR_CASES = [
    pytest.param(
        _schema([{"rule": "self.min <= self.max"}]),
        {"min": 1, "max": 2},
        None,
        id="passes",
    ),
    pytest.param(
        _schema([{"rule": "self.min <= self.max"}]),
        {"min": 3, "max": 2},
        'spec: Invalid value: "object": failed rule: self.min <= self.max',
        id="default-message",
    ),
    pytest.param(
        _schema([{"rule": "self.min <= self.max", "message": "min must not exceed max"}]),
        {"min": 3, "max": 2},
        'spec: Invalid value: "object": min must not exceed max',
        id="message",
    ),
    pytest.param(
        _schema(
            [
                {
                    "rule": "self.min <= self.max",
                    "message": "unused",
                    "messageExpression": "'min ' + string(self.min) + ' > max ' + string(self.max)",
                }
            ]
        ),
        {"min": 3, "max": 2},
        'spec: Invalid value: "object": min 3 > max 2',
        id="message-expression",
    ),
    pytest.param(
        _schema(
            [{"rule": "self.min <= self.max", "fieldPath": ".max", "reason": "FieldValueForbidden"}]
        ),
        {"min": 3, "max": 2},
        "spec.max: Forbidden: failed rule: self.min <= self.max",
        id="field-path-and-reason",
    ),
    pytest.param(
        _schema([{"rule": "has(self.name)", "reason": "FieldValueRequired", "message": "set it"}]),
        {"min": 1},
        "spec: Required value: set it",
        id="reason-required",
    ),
    pytest.param(
        _schema([{"rule": "self.min > 0"}]),
        {"max": 1},
        'spec: Invalid value: "object": no such key: min evaluating rule: self.min > 0',
        id="runtime-error",
    ),
    pytest.param(
        _schema([{"rule": "self.tags[3] == 'x'"}]),
        {"tags": ["a"]},
        'spec: Invalid value: "object": index out of bounds: 3 evaluating rule: '
        "self.tags[3] == 'x'",
        id="runtime-index-error",
    ),
    pytest.param(
        _schema([{"rule": "self.min / self.max > 0"}]),
        {"min": 1, "max": 0},
        'spec: Invalid value: "object": division by zero evaluating rule: self.min / self.max > 0',
        id="runtime-division-by-zero",
    ),
    pytest.param(
        _schema(port=[{"rule": "self > 1"}]),
        {"port": "http"},
        "spec.port: Invalid value: \"\": 'no such overload': call arguments did not match a "
        "supported operator, function or macro signature for rule: self > 1",
        id="runtime-no-such-overload",
    ),
    pytest.param(
        _schema(ports_items=[{"rule": "self.number < 1024", "message": "privileged"}]),
        {"ports": [{"name": "a", "number": 80}, {"name": "b", "number": 8080}]},
        'spec.ports[1]: Invalid value: "object": privileged',
        id="rule-on-list-items",
    ),
    pytest.param(
        _schema(labels_values=[{"rule": "self.startsWith('v')"}]),
        {"labels": {"a": "v1", "b": "x"}},
        "spec.labels[b]: Invalid value: \"string\": failed rule: self.startsWith('v')",
        id="rule-on-map-values",
    ),
    pytest.param(
        _schema(ratio=[{"rule": "self > 0.5"}]),
        {"ratio": 1},
        None,
        id="number-given-as-integer",
    ),
    pytest.param(
        _schema(port=[{"rule": "self == 80 || self == 'http'"}]),
        {"port": "https"},
        "spec.port: Invalid value: \"\": failed rule: self == 80 || self == 'http'",
        id="int-or-string",
    ),
    pytest.param(
        _schema(extra=[{"rule": "!has(self.debug) || self.debug == false"}]),
        {"extra": {"debug": True}},
        'spec.extra: Invalid value: "object": failed rule: !has(self.debug) || self.debug == false',
        id="preserve-unknown-fields",
    ),
]


CR_CASES += [
    pytest.param(
        _schema([{"rule": "self.when < timestamp('2030-01-01T00:00:00Z')"}]),
        {"when": "2031-05-01T10:00:00Z"},
        'spec: Invalid value: "object": failed rule: '
        "self.when < timestamp('2030-01-01T00:00:00Z')",
        id="date-time-is-a-timestamp",
    ),
    pytest.param(
        _schema([{"rule": "self.timeout <= duration('1h')"}]),
        {"timeout": "90m"},
        "spec: Invalid value: \"object\": failed rule: self.timeout <= duration('1h')",
        id="duration",
    ),
    pytest.param(
        _schema([{"rule": "self.max__dash__surge < 3 && self.__namespace__ != 'kube-system'"}]),
        {"max-surge": 1, "namespace": "kube-system"},
        'spec: Invalid value: "object": failed rule: self.max__dash__surge < 3 && '
        "self.__namespace__ != 'kube-system'",
        id="escaped-property-names",
    ),
    pytest.param(
        _schema(
            memory=[{"rule": "isQuantity(self) && quantity(self).isLessThan(quantity('1Gi'))"}]
        ),
        {"memory": "2Gi"},
        'spec.memory: Invalid value: "string": failed rule: isQuantity(self) && '
        "quantity(self).isLessThan(quantity('1Gi'))",
        id="quantity",
    ),
    pytest.param(
        _schema(name=[{"rule": "url(self).getScheme() == 'https'"}]),
        {"name": "http://example.com"},
        "spec.name: Invalid value: \"string\": failed rule: url(self).getScheme() == 'https'",
        id="url",
    ),
]


def _root_rule(rule: str) -> dict[str, Any]:
    schema = _schema()
    schema["x-kubernetes-validations"] = [{"rule": rule}]
    return schema


CR_CASES += [
    pytest.param(
        _schema(template=[{"rule": "self.kind == 'Pod' && has(self.spec.containers)"}]),
        {"template": {"apiVersion": "v1", "kind": "Job", "spec": {"containers": []}}},
        'spec.template: Invalid value: "object": failed rule: '
        "self.kind == 'Pod' && has(self.spec.containers)",
        id="embedded-resource",
    ),
    pytest.param(
        _root_rule("self.metadata.name.startsWith('x') && self.kind == 'Widget'"),
        {"min": 1},
        '<nil>: Invalid value: "object": failed rule: '
        "self.metadata.name.startsWith('x') && self.kind == 'Widget'",
        id="root-metadata",
    ),
]


@pytest.mark.parametrize(("schema", "spec", "message"), CR_CASES)
async def test_custom_resource_create_runs_the_rules(
    cluster: Cluster, schema: dict[str, Any], spec: dict[str, Any], message: str | None
) -> None:
    client = await _serve(cluster, schema)
    if message is None:
        created = await client.create(WIDGETS, _widget(**spec))
        assert created["spec"] == spec
        return
    text = await _invalid(client.create(WIDGETS, _widget(**spec)))
    assert text == f'Widget.example.com "w" is invalid: {message}'
    assert (await client.list(WIDGETS, "default"))["items"] == []


TRANSITION_CASES = [
    pytest.param(
        _schema([{"rule": "self.min >= oldSelf.min", "message": "min may not decrease"}]),
        {"min": 5},
        {"min": 4},
        'spec: Invalid value: "object": min may not decrease',
        id="spec-transition",
    ),
    pytest.param(
        _schema(name=[{"rule": "self == oldSelf", "message": "name is immutable"}]),
        {"name": "a"},
        {"name": "b"},
        'spec.name: Invalid value: "string": name is immutable',
        id="immutable-field",
    ),
    pytest.param(
        _schema(name=[{"rule": "self == oldSelf", "message": "name is immutable"}]),
        {"min": 1},
        {"name": "b"},
        None,
        id="no-old-value-at-path",
    ),
    pytest.param(
        _schema(ports_items=[{"rule": "self.number >= oldSelf.number"}]),
        {"ports": [{"name": "a", "number": 80}, {"name": "b", "number": 90}]},
        {"ports": [{"name": "b", "number": 91}, {"name": "a", "number": 79}]},
        'spec.ports[1]: Invalid value: "object": failed rule: self.number >= oldSelf.number',
        id="list-map-correlated-by-key",
    ),
    pytest.param(
        _schema(labels_values=[{"rule": "self == oldSelf"}]),
        {"labels": {"a": "x"}},
        {"labels": {"a": "x", "b": "new"}},
        None,
        id="map-new-key",
    ),
    pytest.param(
        _schema(labels_values=[{"rule": "self == oldSelf"}]),
        {"labels": {"a": "x"}},
        {"labels": {"a": "y"}},
        'spec.labels[a]: Invalid value: "string": failed rule: self == oldSelf',
        id="map-changed-value",
    ),
]


@pytest.mark.parametrize(("schema", "before", "after", "message"), TRANSITION_CASES)
async def test_transition_rules_run_on_update(
    cluster: Cluster,
    schema: dict[str, Any],
    before: dict[str, Any],
    after: dict[str, Any],
    message: str | None,
) -> None:
    client = await _serve(cluster, schema)
    created = await client.create(WIDGETS, _widget(**before))
    changed = copy.deepcopy(created)
    changed["spec"] = after
    if message is None:
        updated = await client.update(WIDGETS, changed)
        assert updated["spec"] == after
        return
    text = await _invalid(client.update(WIDGETS, changed))
    assert text == f'Widget.example.com "w" is invalid: {message}'
    stored = await client.get(WIDGETS, "w", "default")
    assert stored["spec"] == before


async def test_status_updates_run_the_status_rules(cluster: Cluster) -> None:
    schema = _schema()
    schema["properties"]["status"]["x-kubernetes-validations"] = [
        {
            "rule": "!has(oldSelf.phase) || oldSelf.phase != 'Done' || self.phase == 'Done'",
            "message": "Done is final",
        }
    ]
    client = await _serve(cluster, schema)
    created = await client.create(WIDGETS, _widget(min=1))
    created = copy.deepcopy(created)
    created["status"] = {"phase": "Done"}
    done = copy.deepcopy(await client.update(WIDGETS, created, subresource="status"))
    assert done["status"] == {"phase": "Done"}
    done["status"] = {"phase": "Running"}
    text = await _invalid(client.update(WIDGETS, done, subresource="status"))
    assert (
        text == 'Widget.example.com "w" is invalid: status: Invalid value: "object": Done is final'
    )
    stored = await client.get(WIDGETS, "w", "default")
    assert stored["status"] == {"phase": "Done"}


async def test_rules_are_compiled_once_per_crd_generation(cluster: Cluster) -> None:
    client = await _serve(cluster, _schema([{"rule": "self.min <= self.max"}]))

    def served_schema() -> Any:
        rt = next(r for r in cluster.registry.kinds.served() if r.kind == "Widget")
        return rt.custom.schema

    await client.create(WIDGETS, _widget(min=1, max=2))
    first = compiled_schema(served_schema())
    created = copy.deepcopy(await client.get(WIDGETS, "w", "default"))
    created["spec"]["max"] = 3
    await client.update(WIDGETS, created)
    assert compiled_schema(served_schema()) is first
    crd = copy.deepcopy(await client.get(CRDS, "widgets.example.com"))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.min < self.max"}]
    await client.update(CRDS, crd)
    second = compiled_schema(served_schema())
    assert second is not first
    assert second is not None and second.properties["spec"].rules[0].text == "self.min < self.max"
