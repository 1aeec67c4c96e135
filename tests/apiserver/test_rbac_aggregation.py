"""`aggregated_rules`: the union of the rules of the other ClusterRoles an aggregationRule selects,
selector by selector in name order, duplicates dropped."""

from __future__ import annotations

import pytest

from draplane.api.meta import Obj
from draplane.apiserver.authorization.aggregation import aggregated_rules, rules_differ
from draplane.testing.rbacbuilders import make_cluster_role, rule

GET_PODS = rule(["get"], [""], ["pods"])
LIST_PODS = rule(["list"], [""], ["pods"])
GET_NODES = rule(["get"], [""], ["nodes"])
URLS = {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}

b_role = make_cluster_role("b").label("agg", "x").rules([GET_NODES, GET_PODS]).obj()
a_role = make_cluster_role("a").label("agg", "x").rules([LIST_PODS]).obj()
c_role = make_cluster_role("c").label("other", "y").rules([URLS]).obj()
unlabelled = make_cluster_role("d").rules([rule(["*"], ["*"], ["*"])]).obj()


@pytest.mark.parametrize(
    ("role", "roles", "rules"),
    [
        pytest.param(
            make_cluster_role("agg").aggregate({"agg": "x"}).obj(),
            [b_role, a_role, c_role, unlabelled],
            [LIST_PODS, GET_NODES, GET_PODS],
            id="name-order",
        ),
        pytest.param(
            make_cluster_role("agg").aggregate({"other": "y"}, {"agg": "x"}).obj(),
            [b_role, a_role, c_role],
            [URLS, LIST_PODS, GET_NODES, GET_PODS],
            id="selector-order",
        ),
        pytest.param(
            make_cluster_role("agg").aggregate({"agg": "x"}, {"agg": "x"}).obj(),
            [
                a_role,
                b_role,
                make_cluster_role("e")
                .label("agg", "x")
                .rules([{**GET_PODS, "resourceNames": []}, LIST_PODS])
                .obj(),
            ],
            [LIST_PODS, GET_NODES, GET_PODS],
            id="duplicates-dropped",
        ),
        pytest.param(
            make_cluster_role("a")
            .label("agg", "x")
            .aggregate({"agg": "x"})
            .rules([LIST_PODS])
            .obj(),
            [make_cluster_role("a").label("agg", "x").rules([LIST_PODS]).obj(), b_role],
            [GET_NODES, GET_PODS],
            id="itself-skipped",
        ),
        pytest.param(
            make_cluster_role("agg").aggregate({"none": "z"}).rules([GET_PODS]).obj(),
            [a_role, b_role],
            [],
            id="nothing-selected",
        ),
        pytest.param(make_cluster_role("plain").obj(), [a_role, b_role], [], id="not-aggregated"),
    ],
)
def test_aggregated_rules(role: Obj, roles: list[Obj], rules: list[Obj]) -> None:
    assert aggregated_rules(role, [role, *roles]) == rules


def test_expression_selectors() -> None:
    role = make_cluster_role("agg").obj()
    role["aggregationRule"] = {
        "clusterRoleSelectors": [{"matchExpressions": [{"key": "agg", "operator": "Exists"}]}]
    }
    assert aggregated_rules(role, [a_role, c_role]) == [LIST_PODS]


@pytest.mark.parametrize(
    ("current", "rules", "differ"),
    [
        pytest.param(None, [], False, id="none-and-empty"),
        pytest.param([GET_PODS], [GET_PODS], False, id="equal"),
        pytest.param([{**GET_PODS, "resourceNames": []}], [GET_PODS], False, id="empty-fields"),
        pytest.param([GET_PODS, LIST_PODS], [LIST_PODS, GET_PODS], True, id="order"),
        pytest.param([GET_PODS], [], True, id="removed"),
    ],
)
def test_rules_differ(current: list[Obj] | None, rules: list[Obj], differ: bool) -> None:
    role = make_cluster_role("agg").obj()
    if current is not None:
        role["rules"] = current
    assert rules_differ(role, rules) is differ
