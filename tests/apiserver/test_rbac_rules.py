"""RBAC rule matching (upstream TestRuleMatches and the matching rows 63-66 of the authz spec's
7.4), breakdown, compaction and the compact string of escalation messages."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api.auth import UserInfo
from draplane.apiserver.authorization import Attributes
from draplane.apiserver.authorization.rules import (
    PolicyRule,
    breakdown,
    compact,
    from_review_rules,
    go_quote_list,
    review_rules,
    rule_allows,
)

ANYONE = UserInfo("jane")


def resource(
    verb: str, group: str, res: str, sub: str = "", name: str = "", namespace: str = ""
) -> Attributes:
    return Attributes(
        ANYONE,
        verb,
        api_group=group,
        resource=res,
        subresource=sub,
        name=name,
        namespace=namespace,
    )


def url(verb: str, path: str) -> Attributes:
    return Attributes(ANYONE, verb, resource_request=False, path=path)


def new_rule(
    verbs: str, groups: str | None = None, resources: str = "", names: str = "", urls: str = ""
) -> PolicyRule:
    """Comma-separated lists; `groups=""` is the core group, None no group at all."""

    def split(text: str) -> tuple[str, ...]:
        return tuple(text.split(",")) if text else ()

    api_groups = () if groups is None else tuple(groups.split(","))
    return PolicyRule(split(verbs), api_groups, split(resources), split(names), split(urls))


@dataclass(frozen=True)
class Match:
    rule: PolicyRule
    request: Attributes
    allowed: bool


STAR_VERB = new_rule("*", "group1", "resource1")
STAR_GROUP = new_rule("verb1", "*", "resource1")
STAR_RESOURCE = new_rule("verb1", "group1", "*")
TUPLES = new_rule("verb1,verb2", "group1,group2", "resource1,resource2")
SUBRESOURCE = new_rule("*", "*", "resource1/subresource1")
STAR_URL = new_rule("verb1", urls="*")
URL_PREFIX = new_rule("verb1", urls="/foo/*")
EXACT_URLS = new_rule("*", urls="/foo,/foo/bar/one")
NAMED = new_rule("get", "", "pods", names="foo")
ADMIN_STAR = new_rule("*", "*", "*")
PODS_ONLY = new_rule("*", "*", "pods")
POD_STATUS = new_rule("*", "*", "pods/status")
ANY_SCALE = new_rule("*", "*", "*/scale")
APIS_PREFIX = new_rule("get", urls="/apis/*")


def _rows() -> list[object]:
    rows: list[object] = []

    def add(rule: PolicyRule, request: Attributes, allowed: bool, case: str) -> None:
        rows.append(pytest.param(Match(rule, request, allowed), id=case))

    # TestRuleMatches
    for verb in ("verb1", "verb2"):
        add(STAR_VERB, resource(verb, "group1", "resource1"), True, f"star-verb-{verb}")
        add(STAR_VERB, resource(verb, "group2", "resource1"), False, f"star-verb-group-{verb}")
        add(STAR_VERB, resource(verb, "group1", "resource2"), False, f"star-verb-res-{verb}")
    for grp in ("group1", "group2"):
        add(STAR_GROUP, resource("verb1", grp, "resource1"), True, f"star-group-{grp}")
        add(STAR_GROUP, resource("verb1", grp, "resource2"), False, f"star-group-res-{grp}")
        add(STAR_GROUP, resource("verb2", grp, "resource1"), False, f"star-group-verb-{grp}")
    for res in ("resource1", "resource2"):
        add(STAR_RESOURCE, resource("verb1", "group1", res), True, f"star-resource-{res}")
        add(STAR_RESOURCE, resource("verb1", "group2", res), False, f"star-resource-grp-{res}")
        add(STAR_RESOURCE, resource("verb2", "group1", res), False, f"star-resource-verb-{res}")
    for verb in ("verb1", "verb2"):
        for grp in ("group1", "group2"):
            for res in ("resource1", "resource2"):
                add(TUPLES, resource(verb, grp, res), True, f"tuple-{verb}-{grp}-{res}")
    for verb in ("verb1", "verb2"):
        add(SUBRESOURCE, resource(verb, "group1", "resource1", "subresource1"), True, f"sub-{verb}")
        add(
            SUBRESOURCE,
            resource(verb, "group2", "resource1", "subresource2"),
            False,
            f"sub2-{verb}",
        )
        add(
            SUBRESOURCE,
            resource(verb, "group1", "resource2", "subresource1"),
            False,
            f"res2-{verb}",
        )
        add(SUBRESOURCE, resource(verb, "group1", "resource1"), False, f"no-sub-{verb}")
    for path in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one"):
        add(STAR_URL, url("verb1", path), True, f"star-url{path}")
        add(STAR_URL, url("verb2", path), False, f"star-url-verb2{path}")
    for path, allowed in (
        ("/foo", False),
        ("/foo/bar", True),
        ("/foo/baz/one", True),
        ("/notfoo", False),
        ("/notfoo/bar", False),
    ):
        add(URL_PREFIX, url("verb1", path), allowed, f"url-prefix{path}")
    for path, allowed in (
        ("/foo", True),
        ("/foo/bar", False),
        ("/foo/bar/one", True),
        ("/foo/baz/one", False),
    ):
        for verb in ("verb1", "verb2"):
            add(EXACT_URLS, url(verb, path), allowed, f"exact-url-{verb}{path}")
    # resourceNames: a request without a name never matches a rule with names.
    add(NAMED, resource("get", "", "pods", name="foo"), True, "names-listed")
    add(NAMED, resource("get", "", "pods", name="bar"), False, "names-other")
    add(NAMED, resource("list", "", "pods"), False, "names-list-without-name")
    add(NAMED, resource("get", "", "pods"), False, "names-no-name")
    # 7.4 row 63: verbs are case-sensitive.
    add(ADMIN_STAR, resource("GET", "", "pods", namespace="ns1"), True, "row63-star-verb-upper")
    add(new_rule("get", "*", "*"), resource("GET", "", "pods"), False, "row63-upper-get")
    # row 64: `pods` does not match `pods/status`, and the reverse.
    add(PODS_ONLY, resource("get", "", "pods"), True, "row64-pods")
    add(PODS_ONLY, resource("get", "", "pods", "status"), False, "row64-pods-not-status")
    add(POD_STATUS, resource("get", "", "pods", "status"), True, "row64-status")
    add(POD_STATUS, resource("get", "", "pods"), False, "row64-status-not-pods")
    # row 65: `*/scale`.
    add(ANY_SCALE, resource("get", "apps", "deployments", "scale"), True, "row65-deploy-scale")
    add(ANY_SCALE, resource("get", "x", "anything", "scale"), True, "row65-anything-scale")
    add(ANY_SCALE, resource("get", "", "pods"), False, "row65-pods")
    add(ANY_SCALE, resource("get", "", "pods", "status"), False, "row65-pods-status")
    add(ADMIN_STAR, resource("get", "", "pods", "status"), True, "star-covers-subresources")
    # row 66: `/apis/*` matches `/apis/v1` but not `/apis`.
    add(APIS_PREFIX, url("get", "/apis/v1"), True, "row66-apis-v1")
    add(APIS_PREFIX, url("get", "/apis"), False, "row66-apis")
    # Resource rules never match non-resource requests and the reverse.
    add(ADMIN_STAR, url("get", "/healthz"), False, "resource-rule-url-request")
    add(STAR_URL, resource("verb1", "", "pods"), False, "url-rule-resource-request")
    return rows


@pytest.mark.parametrize("case", _rows())
def test_rule_allows(case: Match) -> None:
    assert rule_allows(case.request, case.rule) is case.allowed


@pytest.mark.parametrize(
    ("rule", "pieces"),
    [
        pytest.param(
            new_rule("get,list", "", "pods,nodes"),
            [
                new_rule("get", "", "pods"),
                new_rule("list", "", "pods"),
                new_rule("get", "", "nodes"),
                new_rule("list", "", "nodes"),
            ],
            id="verbs-x-resources",
        ),
        pytest.param(
            PolicyRule(("get",), ("", "apps"), ("pods",)),
            [PolicyRule(("get",), ("",), ("pods",)), PolicyRule(("get",), ("apps",), ("pods",))],
            id="groups",
        ),
        pytest.param(
            new_rule("get", "", "pods", names="a,b"),
            [new_rule("get", "", "pods", names="a"), new_rule("get", "", "pods", names="b")],
            id="names",
        ),
        pytest.param(
            new_rule("get,head", urls="/a,/b"),
            [
                new_rule("get", urls="/a"),
                new_rule("head", urls="/a"),
                new_rule("get", urls="/b"),
                new_rule("head", urls="/b"),
            ],
            id="urls",
        ),
    ],
)
def test_breakdown(rule: PolicyRule, pieces: list[PolicyRule]) -> None:
    assert breakdown(rule) == pieces


@pytest.mark.parametrize(
    ("rules", "compacted"),
    [
        pytest.param(
            [new_rule("create", "apps", "deployments"), new_rule("update", "apps", "deployments")],
            [new_rule("create,update", "apps", "deployments")],
            id="verbs-merged",
        ),
        pytest.param(
            [
                new_rule("get", "", "pods", names="a"),
                new_rule("list", "", "pods", names="a"),
                new_rule("get", "", "pods", names="b"),
            ],
            [new_rule("get,list", "", "pods", names="a"), new_rule("get", "", "pods", names="b")],
            id="one-name-merged-per-name",
        ),
        pytest.param(
            [new_rule("get", urls="/a"), new_rule("get", "", "pods,nodes")],
            [new_rule("get", urls="/a"), new_rule("get", "", "pods,nodes")],
            id="complex-kept",
        ),
    ],
)
def test_compact(rules: list[PolicyRule], compacted: list[PolicyRule]) -> None:
    assert compact(rules) == compacted


@pytest.mark.parametrize(
    ("rule", "text"),
    [
        pytest.param(
            new_rule("create,update", "apps", "deployments"),
            '{APIGroups:["apps"], Resources:["deployments"], Verbs:["create" "update"]}',
            id="resource",
        ),
        pytest.param(
            new_rule("get", "", "pods", names="p"),
            '{APIGroups:[""], Resources:["pods"], ResourceNames:["p"], Verbs:["get"]}',
            id="names",
        ),
        pytest.param(
            new_rule("get", urls="/healthz"),
            '{NonResourceURLs:["/healthz"], Verbs:["get"]}',
            id="url",
        ),
    ],
)
def test_compact_string(rule: PolicyRule, text: str) -> None:
    assert rule.compact_string() == text


def test_go_quote_list_escapes() -> None:
    assert go_quote_list(['a"b', "c\\d"]) == '["a\\"b" "c\\\\d"]'
    assert go_quote_list([]) == "[]"


def test_wire_round_trip_and_review_form() -> None:
    wire = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]}
    rule = PolicyRule.from_wire(wire)
    assert rule.to_wire() == wire
    assert PolicyRule.from_wire({"verbs": "get", "resources": [1, "pods"]}) == PolicyRule(
        resources=("pods",)
    )
    mixed = [rule, new_rule("get", urls="/a")]
    assert from_review_rules(*review_rules(mixed)) == mixed
