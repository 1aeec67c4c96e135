"""Runtime cost of CRD validation rules through the in-process registry: rules whose estimated
cost lets the CRD be written but whose cost on a large custom resource is over PerCallLimit
(1,000,000), or that together exhaust the object's RuntimeCELCostBudget (10,000,000), fail the
write with 422 Invalid and upstream's messages at the rule's node, and no later rule runs."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from draplane.api import errors, kinds
from draplane.api.kinds import ResourceType
from draplane.testing.cluster import Cluster, start_cluster
from draplane.testing.crds import make_crd

pytestmark = pytest.mark.asyncio(loop_scope="module")
CRDS = kinds.CUSTOM_RESOURCE_DEFINITIONS
_KINDS = (f"Widget{i}" for i in itertools.count())
LONG = "a" * 110_000
"""A string each scan of which costs 110,000: nine scans are within PerCallLimit, eleven not."""


def _scans(n: int, self_: str = "self.s") -> str:
    return " && ".join([f"!{self_}.contains('x')"] * n)


SCAN9, SCAN11 = _scans(9), _scans(11)
NESTED = "self.nums.all(x, self.nums.all(y, x != y || x == y))"
MESSAGE11 = " || ".join(["self.s.contains('x')"] * 11) + " ? 'has x' : 'min must be positive'"
BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)


def _call_limit(rule: str) -> str:
    return (
        "'operation cancelled: actual cost limit exceeded': no further validation rules will be "
        f"run due to call cost exceeds limit for rule: {rule}"
    )


def _schema(
    spec_rules: list[dict[str, Any]], s_rules: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """spec (with `spec_rules`): min, s (a string of up to 120,000 characters, with `s_rules`),
    nums (up to 200 integers), extra (unknown fields) and name (a rule that fails on "bad")."""
    s: dict[str, Any] = {"type": "string", "maxLength": 120_000}
    if s_rules:
        s["x-kubernetes-validations"] = s_rules
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": spec_rules,
                "properties": {
                    "min": {"type": "integer"},
                    "s": s,
                    "nums": {"type": "array", "maxItems": 200, "items": {"type": "integer"}},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "name": {
                        "type": "string",
                        "maxLength": 8,
                        "x-kubernetes-validations": [{"rule": "self != 'bad'"}],
                    },
                },
            }
        },
    }


def _rule(rule: str, **extra: str) -> dict[str, Any]:
    return {"rule": rule, **extra}


CASES = [
    pytest.param(
        _schema([_rule(SCAN9)]),
        {"s": LONG, "name": "ok"},
        None,
        id="nine-scans-within-the-call-limit",
    ),
    pytest.param(
        _schema([_rule("self.min > 0"), _rule(SCAN11)]),
        {"min": 0, "s": LONG, "name": "bad"},
        [
            ("spec", "failed rule: self.min > 0"),
            ("spec", _call_limit(SCAN11)),
        ],
        id="call-limit-stops-validation",
    ),
    pytest.param(
        _schema([_rule(SCAN11)]),
        {"s": "short", "name": "bad"},
        [("spec.name", "failed rule: self != 'bad'")],
        id="call-limit-depends-on-the-object",
    ),
    pytest.param(
        _schema([_rule(SCAN11, message="s is scanned too often")]),
        {"s": LONG},
        [("spec", _call_limit("s is scanned too often"))],
        id="call-limit-names-the-message",
    ),
    pytest.param(
        # The estimate cannot bound a value the schema does not describe (it counts each scan
        # as 1); at run time the scans cost the longest string in `self`.
        _schema([_rule(_scans(11, "self.extra.s"))]),
        {"extra": {"s": LONG}},
        [("spec", _call_limit(_scans(11, "self.extra.s")))],
        id="call-limit-on-unknown-fields",
    ),
    pytest.param(
        _schema([_rule(SCAN9)] * 11),
        {"s": LONG, "name": "bad"},
        [("spec", BUDGET)],
        id="budget-exhausted-at-one-node",
    ),
    pytest.param(
        _schema([_rule(SCAN9)] * 10, s_rules=[_rule(_scans(9, "self"))]),
        {"s": LONG, "name": "bad"},
        [("spec.s", BUDGET)],
        id="budget-exhausted-below",
    ),
    pytest.param(
        _schema([_rule("self.min > 0", messageExpression=MESSAGE11)]),
        {"min": 0, "s": LONG},
        [
            (
                "spec",
                "no further validation rules will be run due to call cost exceeds limit for "
                f'messageExpression: "{MESSAGE11}"',
            )
        ],
        id="message-expression-call-limit",
    ),
    pytest.param(
        _schema([_rule("self.min > 0", messageExpression=MESSAGE11)]),
        {"min": 0, "s": "short"},
        [("spec", "min must be positive")],
        id="message-expression-within-limit",
    ),
    pytest.param(
        # 22,500 comprehension iterations cost well under PerCallLimit, but cel-expr-python
        # stops an evaluation after 10,000; reported as the call cost limit.
        _schema([_rule(NESTED)]),
        {"nums": list(range(150))},
        [("spec", _call_limit(NESTED))],
        id="iteration-budget",
    ),
    pytest.param(
        _schema([_rule(NESTED)]),
        {"nums": list(range(90))},
        None,
        id="iterations-within-budget",
    ),
]


# Its own `cluster`, not the suite's: one for the whole module (the suite's is per test), since
# every case creates its own CRD and a registry per case would make the table slow.
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster() -> AsyncIterator[Cluster]:
    c = await start_cluster()
    yield c
    await c.stop()


@pytest.mark.parametrize(("schema", "spec", "causes"), CASES)
async def test_runtime_cost_limits(
    cluster: Cluster,
    schema: dict[str, Any],
    spec: dict[str, Any],
    causes: list[tuple[str, str]] | None,
) -> None:
    client = cluster.client()
    kind = next(_KINDS)  # one CRD a case, on the one cluster of the module
    plural = kind.lower() + "s"
    await client.create(CRDS, make_crd(plural=plural, kind=kind, schema=schema, scale=False))
    widgets = ResourceType("example.com", "v1", plural, kind, True, kind.lower())
    widget = {
        "apiVersion": "example.com/v1",
        "kind": kind,
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }
    if causes is None:
        created = await client.create(widgets, widget)
        assert created["spec"] == spec
        return
    with pytest.raises(errors.StatusError) as caught:
        await client.create(widgets, widget)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    got = [
        (c["reason"], c["field"], c["message"]) for c in caught.value.details.get("causes") or []
    ]
    type_ = {"spec": "object"}
    assert got == [
        ("FieldValueInvalid", field, f'Invalid value: "{type_.get(field, "string")}": {message}')
        for field, message in causes
    ]
    assert (await client.list(widgets, "default"))["items"] == []
