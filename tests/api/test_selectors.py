"""Label and field selector grammar and matching, after apimachinery's selector tests."""

from __future__ import annotations

import pytest

from draplane.api import errors, kinds
from draplane.api.fieldselector import FieldGetter
from draplane.api.selectors import (
    DOES_NOT_EXIST,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    FieldSelector,
    LabelSelector,
    Requirement,
)
from draplane.apiserver.strategies.table import strategy_for
from draplane.testing.builders import make_node, make_pod


def _fields(rt: kinds.ResourceType) -> dict[str, FieldGetter]:
    """The kind's selectable fields, as its declaration names them."""
    return strategy_for(rt).selectable_fields


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", [], id="empty"),
        pytest.param("\rx", [Requirement("x", EXISTS)], id="carriage-return-exists"),
        pytest.param(
            "this-is-a-dns.domain.com/key-with-dash",
            [Requirement("this-is-a-dns.domain.com/key-with-dash", EXISTS)],
            id="prefixed-key-exists",
        ),
        pytest.param(
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            [Requirement("this-is-another-dns.domain.com/key-with-dash", IN, ("so", "what"))],
            id="prefixed-key-in",
        ),
        pytest.param(
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            [Requirement("0.1.2.domain/99", NOT_IN, ("10.10.100.1", "tick.tack.clock"))],
            id="notin-with-spaces",
        ),
        pytest.param("foo  in\t (abc)", [Requirement("foo", IN, ("abc",))], id="tab"),
        pytest.param("x notin\n (abc)", [Requirement("x", NOT_IN, ("abc",))], id="newline"),
        pytest.param("x in (abc,)", [Requirement("x", IN, ("abc", ""))], id="trailing-comma"),
        pytest.param("x in ()", [Requirement("x", IN, ("",))], id="empty-parens"),
        pytest.param("x notin ( )", [Requirement("x", NOT_IN, ("",))], id="blank-parens"),
        pytest.param("x notin (, a)", [Requirement("x", NOT_IN, ("", "a"))], id="leading-comma"),
        pytest.param(
            "x notin (abc,,def),bar,z in (),w",
            [
                Requirement("x", NOT_IN, ("abc", "", "def")),
                Requirement("bar", EXISTS),
                Requirement("z", IN, ("",)),
                Requirement("w", EXISTS),
            ],
            id="mixed",
        ),
        pytest.param(
            "x,y in (a)", [Requirement("x", EXISTS), Requirement("y", IN, ("a",))], id="exists-in"
        ),
        pytest.param("x=a", [Requirement("x", EQUALS, ("a",))], id="equals"),
        pytest.param("x==a", [Requirement("x", "==", ("a",))], id="double-equals"),
        pytest.param("x!=a", [Requirement("x", NOT_EQUALS, ("a",))], id="not-equals"),
        pytest.param("x=", [Requirement("x", EQUALS, ("",))], id="equals-empty"),
        pytest.param(
            "x= ,z= ",
            [Requirement("x", EQUALS, ("",)), Requirement("z", EQUALS, ("",))],
            id="equals-blank",
        ),
        pytest.param("x>1", [Requirement("x", GREATER_THAN, ("1",))], id="greater-than"),
        pytest.param("x<7", [Requirement("x", LESS_THAN, ("7",))], id="less-than"),
        pytest.param("!x", [Requirement("x", DOES_NOT_EXIST)], id="does-not-exist"),
        pytest.param("a ", [Requirement("a", EXISTS)], id="trailing-space"),
        pytest.param(
            "a in (x,y,notin, z,in)",
            [Requirement("a", IN, ("x", "y", "notin", "z", "in"))],
            id="keywords-as-values",
        ),
        pytest.param("notin=in", [Requirement("notin", EQUALS, ("in",))], id="keywords-as-key"),
    ],
)
def test_label_selector_parse(text: str, expected: list[Requirement]) -> None:
    assert list(LabelSelector.parse(text).requirements) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("x=a||y=b", "unable to parse requirement: ", id="double-pipe"),
        pytest.param("x==a==b", "found '==', expected: ',' or 'end of string'", id="chained-eq"),
        pytest.param("!x=a", "found '=', expected: ',' or 'end of string'", id="not-with-value"),
        pytest.param(
            "x<a",
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' "
            "operators, the value must be an integer",
            id="lt-not-integer",
        ),
        pytest.param("x,,y", "found ',', expected: identifier after ','", id="double-comma"),
        pytest.param(",x,y", "found ',', expected: !, identifier, or 'end of string'", id="lead"),
        pytest.param(
            "x nott in (y)",
            "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt",
            id="bad-operator",
        ),
        pytest.param("a in (xyz),", "found '', expected: identifier after ','", id="trailing"),
        pytest.param(
            "a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'", id="no-comma"
        ),
        pytest.param(
            "a in (xyz abc)",
            "unable to parse requirement: found 'abc', expected: ',' or ')'",
            id="space",
        ),
        pytest.param(
            "a notin(",
            "unable to parse requirement: found '', expected: ',', ')' or identifier",
            id="unclosed",
        ),
        pytest.param(
            "a (",
            "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt",
            id="paren-after-key",
        ),
        pytest.param("(", "found '(', expected: !, identifier, or 'end of string'", id="paren"),
        pytest.param(
            "x in a", "unable to parse requirement: found 'a' expected: '('", id="in-no-parens"
        ),
        pytest.param(
            "a/b/c=d",
            'unable to parse requirement: key: Invalid value: "a/b/c": a qualified name',
            id="bad-key",
        ),
        pytest.param(
            "x=-a",
            'unable to parse requirement: values[0][x]: Invalid value: "-a": a valid label',
            id="bad-value",
        ),
        pytest.param("!", "unable to parse requirement: found '', expected: identifier", id="bang"),
    ],
)
def test_label_selector_parse_errors(text: str, message: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        LabelSelector.parse(text)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    assert info.value.message.startswith(message)


@pytest.mark.parametrize(
    ("text", "labels", "match"),
    [
        pytest.param("", {"x": "y"}, True, id="empty-matches-all"),
        pytest.param("x=y", {"x": "y"}, True, id="equals"),
        pytest.param("x=y,z=w", {"x": "y", "z": "w"}, True, id="two-equals"),
        pytest.param("x!=y,z!=w", {"x": "z", "z": "a"}, True, id="not-equals"),
        pytest.param("notin=in", {"notin": "in"}, True, id="keywords"),
        pytest.param("x", {"x": "z"}, True, id="exists"),
        pytest.param("!x", {"y": "z"}, True, id="does-not-exist"),
        pytest.param("x>1", {"x": "2"}, True, id="gt"),
        pytest.param("x<1", {"x": "0"}, True, id="lt"),
        pytest.param("x in (a,b)", {"x": "b"}, True, id="in"),
        pytest.param("x notin (a,b)", {}, True, id="notin-missing-key"),
        pytest.param("x!=a", {}, True, id="not-equals-missing-key"),
        pytest.param("x=z", {}, False, id="equals-missing"),
        pytest.param("x=y", {"x": "z"}, False, id="equals-other"),
        pytest.param("x=y,z=w", {"x": "w", "z": "w"}, False, id="one-of-two"),
        pytest.param("x!=y,z!=w", {"x": "z", "z": "w"}, False, id="not-equals-hit"),
        pytest.param("x", {"y": "z"}, False, id="exists-missing"),
        pytest.param("!x", {"x": "z"}, False, id="does-not-exist-present"),
        pytest.param("x>1", {"x": "0"}, False, id="gt-smaller"),
        pytest.param("x<1", {"x": "2"}, False, id="lt-larger"),
        pytest.param("x>1", {"x": "abc"}, False, id="gt-non-integer-label"),
        pytest.param("x>1", {}, False, id="gt-missing"),
        pytest.param("x in (a,b)", {"x": "c"}, False, id="in-other"),
        pytest.param("x notin (a,b)", {"x": "a"}, False, id="notin-hit"),
    ],
)
def test_label_selector_matches(text: str, labels: dict[str, str], match: bool) -> None:
    assert LabelSelector.parse(text).matches(labels) is match


@pytest.mark.parametrize(
    ("sel", "labels", "match"),
    [
        pytest.param(None, {"a": "b"}, False, id="none-matches-nothing"),
        pytest.param({}, {"a": "b"}, True, id="empty-matches-everything"),
        pytest.param({"matchLabels": {"a": "b"}}, {"a": "b"}, True, id="match-labels"),
        pytest.param({"matchLabels": {"a": "b"}}, {"a": "c"}, False, id="match-labels-miss"),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "y"]}]},
            {"a": "y"},
            True,
            id="in",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
            {"a": "y"},
            False,
            id="does-not-exist",
        ),
        pytest.param(
            {
                "matchLabels": {"app": "x"},
                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
            },
            {"app": "x", "tier": "web"},
            True,
            id="labels-and-expressions",
        ),
    ],
)
def test_from_label_selector(sel: dict[str, object] | None, labels: dict[str, str], match: bool):
    assert LabelSelector.from_label_selector(sel).matches(labels) is match


@pytest.mark.parametrize(
    "sel",
    [
        pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt"}]}, id="bad-operator"),
        pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]}, id="in-no-values"),
        pytest.param({"matchLabels": {"a/b/c": "x"}}, id="bad-key"),
        pytest.param({"matchLabels": "x"}, id="wrong-type"),
    ],
)
def test_from_label_selector_rejects(sel: dict[str, object]) -> None:
    with pytest.raises(errors.StatusError) as info:
        LabelSelector.from_label_selector(sel)
    assert info.value.code == 400


def test_label_selector_empty_and_str() -> None:
    assert LabelSelector.parse("").empty()
    assert not LabelSelector.parse("a").empty()
    assert not LabelSelector.from_label_selector(None).empty()
    assert str(LabelSelector.parse("a in (x,y),!b,c=d,e>3")) == "a in (x,y),!b,c=d,e>3"


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        pytest.param("metadata.name=a", "metadata.name", "a", id="name"),
        pytest.param("metadata.name==a", "metadata.name", "a", id="double-equals"),
        pytest.param("spec.nodeName=", "spec.nodeName", "", id="empty-value"),
        pytest.param(r"metadata.name=a\=\=b", "metadata.name", "a==b", id="escaped-equals"),
        pytest.param(r"metadata.name=a\,b", "metadata.name", "a,b", id="escaped-comma"),
        pytest.param(r"metadata.name=a\\b", "metadata.name", "a\\b", id="escaped-backslash"),
    ],
)
def test_field_selector_parse(text: str, field: str, value: str) -> None:
    sel = FieldSelector.parse(text, _fields(kinds.PODS))
    assert sel.exact(field) == value
    assert len(sel.requirements) == 1


@pytest.mark.parametrize(
    ("text", "rt", "message"),
    [
        pytest.param(
            "x=a||y=b",
            kinds.PODS,
            "invalid field selector: unescaped character in value: 61",
            id="unescaped-equals",
        ),
        pytest.param(
            "metadata.name==a==b",
            kinds.PODS,
            "invalid field selector: unescaped character in value: 61",
            id="chained",
        ),
        pytest.param(
            "metadata.name=a,b",
            kinds.PODS,
            "invalid selector: 'metadata.name=a,b'; can't understand 'b'",
            id="bare-term",
        ),
        pytest.param(
            "x in (a)",
            kinds.PODS,
            "invalid selector: 'x in (a)'; can't understand 'x in (a)'",
            id="set-syntax",
        ),
        pytest.param(
            r"metadata.name=a\b",
            kinds.PODS,
            "invalid field selector: invalid escape sequence: \\b",
            id="bad-escape",
        ),
        pytest.param(
            "metadata.name=a\\",
            kinds.PODS,
            "invalid field selector: invalid escape sequence: \\",
            id="trailing-backslash",
        ),
        pytest.param(
            "spec.foo=a", kinds.PODS, "field label not supported: spec.foo", id="unsupported"
        ),
        pytest.param(
            "spec.nodeName=a", kinds.NODES, "field label not supported: spec.nodeName", id="kind"
        ),
        pytest.param(
            "reason=x", kinds.PODS, "field label not supported: reason", id="event-field-on-pod"
        ),
    ],
)
def test_field_selector_errors(text: str, rt: kinds.ResourceType, message: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        FieldSelector.parse(text, _fields(rt))
    assert info.value.code == 400
    assert info.value.message == message


_POD = (
    make_pod("web", "prod")
    .node("node-1")
    .phase("Running")
    .set("spec.restartPolicy", "Always")
    .set("status.podIPs", [{"ip": "10.0.0.1"}])
    .obj()
)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param("metadata.name=web", True, id="name"),
        pytest.param("metadata.namespace=prod", True, id="namespace"),
        pytest.param("metadata.name!=web", False, id="name-not-equal"),
        pytest.param("spec.nodeName=node-1", True, id="node-name"),
        pytest.param("spec.nodeName=", False, id="unscheduled"),
        pytest.param("status.phase!=Succeeded,status.phase!=Failed", True, id="phase-not-done"),
        pytest.param("status.phase=Pending", False, id="phase"),
        pytest.param("spec.restartPolicy=Always", True, id="restart-policy"),
        pytest.param("spec.hostNetwork=false", True, id="host-network-default"),
        pytest.param("status.podIP=10.0.0.1", True, id="pod-ip"),
        pytest.param("status.nominatedNodeName=", True, id="nominated-empty"),
        pytest.param("spec.schedulerName=default-scheduler", False, id="scheduler-unset"),
        pytest.param("", True, id="empty"),
    ],
)
def test_field_selector_matches_pods(text: str, match: bool) -> None:
    assert FieldSelector.parse(text, _fields(kinds.PODS)).matches(_POD) is match


def test_field_selector_events() -> None:
    event = {
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "uid": "u1"},
        "reason": "Scheduled",
        "type": "Normal",
        "source": {"component": "default-scheduler"},
        "reportingComponent": "default-scheduler",
    }
    sel = FieldSelector.parse(
        "involvedObject.kind=Pod,involvedObject.name=web,involvedObject.uid=u1,"
        "involvedObject.namespace=default,reason=Scheduled,type=Normal,"
        "source=default-scheduler,reportingComponent=default-scheduler",
        _fields(kinds.EVENTS),
    )
    assert sel.matches(event)
    assert not FieldSelector.parse("involvedObject.name=other", _fields(kinds.EVENTS)).matches(
        event
    )


def test_field_selector_nodes_and_namespaces() -> None:
    node = make_node("n1").unschedulable().obj()
    assert FieldSelector.parse("spec.unschedulable=true", _fields(kinds.NODES)).matches(node)
    assert not FieldSelector.parse("spec.unschedulable=false", _fields(kinds.NODES)).matches(node)
    assert FieldSelector.parse("metadata.name=n1", _fields(kinds.NODES)).matches(node)
    namespace = {"metadata": {"name": "ns"}, "status": {"phase": "Active"}}
    assert FieldSelector.parse("status.phase=Active", _fields(kinds.NAMESPACES)).matches(namespace)


def test_field_selector_exact_and_empty() -> None:
    sel = FieldSelector.parse("metadata.name!=a,spec.nodeName=n", _fields(kinds.PODS))
    assert sel.exact("spec.nodeName") == "n"
    assert sel.exact("metadata.name") is None
    assert not sel.empty()
    assert FieldSelector.parse("", _fields(kinds.PODS)).empty()
    assert (
        str(FieldSelector.parse(r"metadata.name=a\,b", _fields(kinds.PODS)))
        == r"metadata.name=a\,b"
    )
