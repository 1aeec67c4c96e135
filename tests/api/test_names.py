"""Name rules and generated names (apimachinery util/validation and storage/names)."""

from __future__ import annotations

import re

import pytest

from draplane.api import names


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param("a", True, id="single-char"),
        pytest.param("my-name", True, id="dash"),
        pytest.param("123-abc", True, id="leading-digit"),
        pytest.param("a" * 63, True, id="max-length"),
        pytest.param("a" * 64, False, id="too-long"),
        pytest.param("", False, id="empty"),
        pytest.param("-a", False, id="leading-dash"),
        pytest.param("a-", False, id="trailing-dash"),
        pytest.param("A", False, id="uppercase"),
        pytest.param("a.b", False, id="dot"),
        pytest.param("a_b", False, id="underscore"),
    ],
)
def test_is_dns1123_label(value: str, ok: bool) -> None:
    assert (names.is_dns1123_label(value) == []) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param("example.com", True, id="dotted"),
        pytest.param("a-b.c-d", True, id="dashes"),
        pytest.param("a" * 253, True, id="max-length"),
        pytest.param("a" * 254, False, id="too-long"),
        pytest.param("", False, id="empty"),
        pytest.param(".a", False, id="leading-dot"),
        pytest.param("a..b", False, id="empty-label"),
        pytest.param("a.-b", False, id="label-leading-dash"),
        pytest.param("A.b", False, id="uppercase"),
    ],
)
def test_is_dns1123_subdomain(value: str, ok: bool) -> None:
    assert (names.is_dns1123_subdomain(value) == []) is ok


def test_error_messages_match_kubernetes() -> None:
    assert names.is_dns1123_label("A_b") == [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]
    assert names.is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert names.is_dns1123_subdomain("Foo") == [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("simple", [], id="plain"),
        pytest.param("now-with-dashes", [], id="dashes"),
        pytest.param("1-starts-with-num", [], id="leading-digit"),
        pytest.param("1234", [], id="digits"),
        pytest.param("simple/simple", [], id="prefixed"),
        pytest.param("example.com/Upper_Case.x", [], id="mixed-case-name"),
        pytest.param("a" * 63, [], id="name-max"),
        pytest.param("a" * 253 + "/" + "b" * 63, [], id="prefix-max"),
        pytest.param("", ["name part must be non-empty"], id="empty"),
        pytest.param("/simple", ["prefix part must be non-empty"], id="empty-prefix"),
        pytest.param("example.com/", ["name part must be non-empty"], id="empty-name"),
        pytest.param(
            "a" * 64, ["name part must be no more than 63 characters"], id="name-too-long"
        ),
        pytest.param("a/b/c", [names.QUALIFIED_NAME_FORMAT_ERROR], id="two-slashes"),
        pytest.param("-a", [names.QUALIFIED_NAME_ERROR], id="leading-dash"),
        pytest.param("a b", [names.QUALIFIED_NAME_ERROR], id="space"),
        pytest.param(
            "Example.com/a",
            ["prefix part " + names.SUBDOMAIN_ERROR],
            id="uppercase-prefix",
        ),
    ],
)
def test_is_qualified_name(value: str, expected: list[str]) -> None:
    assert names.is_qualified_name(value) == expected


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param("", True, id="empty"),
        pytest.param("MyValue", True, id="mixed-case"),
        pytest.param("my_value.1-x", True, id="punctuation"),
        pytest.param("a" * 63, True, id="max"),
        pytest.param("a" * 64, False, id="too-long"),
        pytest.param("-a", False, id="leading-dash"),
        pytest.param("a b", False, id="space"),
        pytest.param("a/b", False, id="slash"),
    ],
)
def test_is_valid_label_value(value: str, ok: bool) -> None:
    assert (names.is_valid_label_value(value) == []) is ok


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("key.name", [], id="dotted"),
        pytest.param("KEY_NAME", [], id="upper"),
        pytest.param(".", ["must not be '.'"], id="dot"),
        pytest.param("..", ["must not be '..'"], id="dot-dot"),
        pytest.param("..a", ["must not start with '..'"], id="dot-dot-prefix"),
        pytest.param("a/b", [names.CONFIG_MAP_KEY_ERROR], id="slash"),
    ],
)
def test_is_config_map_key(value: str, expected: list[str]) -> None:
    assert names.is_config_map_key(value) == expected


def test_generate_name_appends_five_allowed_characters() -> None:
    generated = names.generate_name("my-pod-")
    assert re.fullmatch(r"my-pod-[bcdfghjklmnpqrstvwxz2456789]{5}", generated)


def test_generate_name_cuts_long_bases_to_58() -> None:
    generated = names.generate_name("x" * 100)
    assert len(generated) == 63
    assert generated.startswith("x" * 58)
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{5}", generated[58:])


def test_generate_name_prefix_may_end_with_dash() -> None:
    assert names.name_is_dns_subdomain("pod-", prefix=True) == []
    assert names.name_is_dns_subdomain("pod-", prefix=False) != []


@pytest.mark.parametrize("value", [None, 5, ["a"]], ids=["none", "int", "list"])
def test_non_strings_are_errors_not_exceptions(value: object) -> None:
    assert names.is_dns1123_label(value) == ["must be a string"]
    assert names.is_qualified_name(value) == ["must be a string"]
