"""v1 NodeSelector matching: operators, matchFields, ORed terms, invalid selectors."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api.nodeselector import NodeSelector, match_node_selector_terms, match_term
from draplane.testing.builders import make_node

_NODE = make_node("node-1").label("zone", "a").label("gpus", "4").obj()


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    expr: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expr["values"] = list(values)
    return expr


def _selector(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


@pytest.mark.parametrize(
    ("selector", "match"),
    [
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "In", "a", "b")]}), True, id="in"
        ),
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "In", "b")]}), False, id="in-miss"
        ),
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "NotIn", "b")]}), True, id="notin"
        ),
        pytest.param(
            _selector({"matchExpressions": [_expr("rack", "NotIn", "b")]}),
            True,
            id="notin-missing-label",
        ),
        pytest.param(_selector({"matchExpressions": [_expr("zone", "Exists")]}), True, id="exists"),
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "DoesNotExist")]}),
            False,
            id="does-not-exist",
        ),
        pytest.param(_selector({"matchExpressions": [_expr("gpus", "Gt", "3")]}), True, id="gt"),
        pytest.param(
            _selector({"matchExpressions": [_expr("gpus", "Gt", "4")]}), False, id="gt-equal"
        ),
        pytest.param(_selector({"matchExpressions": [_expr("gpus", "Lt", "5")]}), True, id="lt"),
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "Lt", "5")]}),
            False,
            id="lt-non-integer-label",
        ),
        pytest.param(
            _selector({"matchFields": [_expr("metadata.name", "In", "node-1")]}),
            True,
            id="field-in",
        ),
        pytest.param(
            _selector({"matchFields": [_expr("metadata.name", "NotIn", "node-1")]}),
            False,
            id="field-notin",
        ),
        pytest.param(
            _selector(
                {
                    "matchExpressions": [_expr("zone", "In", "a")],
                    "matchFields": [_expr("metadata.name", "In", "node-2")],
                }
            ),
            False,
            id="term-ands-labels-and-fields",
        ),
        pytest.param(
            _selector(
                {"matchExpressions": [_expr("zone", "In", "b")]},
                {"matchExpressions": [_expr("zone", "In", "a")]},
            ),
            True,
            id="terms-ored",
        ),
        pytest.param(_selector({}), False, id="empty-term-matches-nothing"),
        pytest.param(
            _selector({"matchExpressions": []}, {"matchExpressions": [_expr("zone", "In", "a")]}),
            True,
            id="empty-term-skipped",
        ),
        pytest.param(_selector(), False, id="no-terms"),
        pytest.param(
            _selector({"matchExpressions": [_expr("kubernetes.io/hostname", "In", "node-1")]}),
            True,
            id="hostname-label",
        ),
    ],
)
def test_node_selector_matches(selector: dict[str, Any], match: bool) -> None:
    assert NodeSelector.parse(selector).matches(_NODE) is match
    assert match_node_selector_terms(_NODE, selector) is match


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "Bogus", "a")]}),
            'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Bogus"',
            id="bad-operator",
        ),
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "In")]}),
            "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{}: for "
            "'in', 'notin' operators, values set can't be empty",
            id="in-without-values",
        ),
        pytest.param(
            _selector({"matchExpressions": [_expr("zone", "Exists", "a")]}),
            "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value",
            id="exists-with-values",
        ),
        pytest.param(
            _selector({"matchExpressions": [_expr("gpus", "Gt", "x")]}),
            'nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "x": for '
            "'Gt', 'Lt' operators, the value must be an integer",
            id="gt-not-integer",
        ),
        pytest.param(
            _selector({"matchExpressions": [_expr("a/b/c", "Exists")]}),
            "nodeSelectorTerms[0].matchExpressions[0].key: Invalid value",
            id="bad-key",
        ),
        pytest.param(
            _selector({"matchFields": [_expr("metadata.name", "In", "a", "b")]}),
            "nodeSelectorTerms[0].matchFields[0].values: Invalid value",
            id="field-two-values",
        ),
        pytest.param(
            _selector({"matchFields": [_expr("metadata.name", "Exists")]}),
            'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists"',
            id="field-operator",
        ),
        pytest.param({"nodeSelectorTerms": "x"}, "nodeSelectorTerms: must be a list", id="type"),
        pytest.param(_selector("x"), "nodeSelectorTerms[0]: must be an object", id="term-type"),
    ],
)
def test_node_selector_parse_errors(selector: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        NodeSelector.parse(selector)
    assert str(info.value).startswith(message)
    assert match_node_selector_terms(_NODE, selector) is False


def test_match_term() -> None:
    assert match_term(_NODE, {"matchExpressions": [_expr("zone", "In", "a")]})
    assert not match_term(_NODE, {"matchExpressions": [_expr("zone", "In", "b")]})
    assert not match_term(_NODE, {})


def test_node_without_labels() -> None:
    node = {"metadata": {"name": "bare"}}
    assert NodeSelector.parse(
        _selector({"matchExpressions": [_expr("z", "DoesNotExist")]})
    ).matches(node)
    assert NodeSelector.parse(
        _selector({"matchFields": [_expr("metadata.name", "In", "bare")]})
    ).matches(node)
