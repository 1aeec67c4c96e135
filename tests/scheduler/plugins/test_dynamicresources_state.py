"""DynamicResources per-attempt helpers: node predicates answer exactly as NodeSelector.matches
(the common `In` shape by a set lookup), and unsuitable-node sets follow the context."""

from __future__ import annotations

import pytest

from draplane.api.meta import Obj
from draplane.api.nodeselector import NodeSelector
from draplane.scheduler.framework import NodeInfo
from draplane.scheduler.plugins.dynamicresources.state import StateData, node_predicate
from draplane.testing.builders import make_node, make_pod, make_scheduling_context

HOST = "kubernetes.io/hostname"
NODES = [
    make_node("a").label(HOST, "a").label("zone", "z1").obj(),
    make_node("b").label(HOST, "b").label("zone", "z2").obj(),
    make_node("c").label("zone", "z1").obj(),
]


def _expr(key: str, operator: str, *values: str) -> Obj:
    return {"key": key, "operator": operator, "values": list(values)}


def _terms(*terms: Obj) -> Obj:
    return {"nodeSelectorTerms": list(terms)}


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param(_terms({"matchExpressions": [_expr(HOST, "In", "a")]}), ["a"], id="hostname"),
        pytest.param(
            _terms({"matchExpressions": [_expr(HOST, "In", "a", "b"), _expr("zone", "In", "z2")]}),
            ["b"],
            id="two-in-requirements",
        ),
        pytest.param(
            _terms({"matchExpressions": [_expr("zone", "NotIn", "z2")]}), ["a", "c"], id="not-in"
        ),
        pytest.param(
            _terms(
                {"matchExpressions": [_expr(HOST, "In", "a")]},
                {"matchExpressions": [_expr("zone", "In", "z2")]},
            ),
            ["a", "b"],
            id="two-terms",
        ),
        pytest.param(
            _terms({"matchFields": [_expr("metadata.name", "In", "c")]}), ["c"], id="fields"
        ),
        pytest.param(_terms({}), [], id="empty-term-matches-nothing"),
    ],
)
def test_node_predicate_matches_like_the_selector(selector: Obj, want: list[str]) -> None:
    parsed = NodeSelector.parse(selector)
    predicate = node_predicate(parsed)

    got = [n["metadata"]["name"] for n in NODES if predicate(NodeInfo(n))]

    assert got == want == [n["metadata"]["name"] for n in NODES if parsed.matches(n)]


def test_unsuitable_sets_follow_the_scheduling_context() -> None:
    pod = make_pod("p").obj()
    first = make_scheduling_context(pod).unsuitable_nodes("gpu", "a").obj()
    second = make_scheduling_context(pod).unsuitable_nodes("gpu", "b", "c").obj()
    data = StateData()

    assert data.unsuitable_set(first, "gpu") == {"a"}
    assert data.unsuitable_set(first, "other") == frozenset()
    assert data.unsuitable_set(second, "gpu") == {"b", "c"}
