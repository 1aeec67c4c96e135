"""Object name rules and generated names, with Kubernetes' exact error messages.

Each `is_*` function returns a list of messages (empty = valid), as apimachinery's
`k8s.io/apimachinery/pkg/util/validation` does; callers wrap them in FieldErrors.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
CONFIG_MAP_KEY_MAX = 253

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_FMT + ")?"
_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_ENV_VAR_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"

_LABEL_RE = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN_FMT)
_QUALIFIED_RE = re.compile(_QUALIFIED_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_CONFIG_MAP_KEY_RE = re.compile(_CONFIG_MAP_KEY_FMT)
_ENV_VAR_RE = re.compile(_ENV_VAR_FMT)


def _regex_error(msg: str, fmt: str, examples: tuple[str, ...]) -> str:
    """apimachinery's RegexError: the message, examples, and the regex used."""
    if examples:
        msg += " (e.g. '" + "',  or '".join(examples) + "', "
    else:
        msg += " ("
    return msg + "regex used for validation is '" + fmt + "')"


LABEL_ERROR = _regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _LABEL_FMT,
    ("my-name", "123-abc"),
)
SUBDOMAIN_ERROR = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character",
    _SUBDOMAIN_FMT,
    ("example.com",),
)
QUALIFIED_NAME_ERROR = _regex_error(
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character",
    _QUALIFIED_FMT,
    ("MyName", "my.name", "123-abc"),
)
QUALIFIED_NAME_FORMAT_ERROR = (
    _regex_error(
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character",
        _QUALIFIED_FMT,
        ("MyName", "my.name", "123-abc"),
    )
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
LABEL_VALUE_ERROR = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    ("MyValue", "my_value", "12345"),
)
CONFIG_MAP_KEY_ERROR = _regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    _CONFIG_MAP_KEY_FMT,
    ("key.name", "KEY_NAME", "key-name"),
)
ENV_VAR_ERROR = _regex_error(
    "a valid environment variable name must consist of alphabetic characters, digits, '_', "
    "'-', or '.', and must not start with a digit",
    _ENV_VAR_FMT,
    ("my.env-name", "MY_ENV.NAME", "MyEnvName1"),
)

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATE_BASE_MAX = 58
_rand = random.SystemRandom()


_CACHE_MAX = 8192


def _memoized(fn: Callable[[Any], list[str]]) -> Callable[[Any], list[str]]:
    """Remember results per string: the same label keys and values recur on every object."""
    cache: dict[str, tuple[str, ...]] = {}

    def check(value: Any) -> list[str]:
        if type(value) is not str:
            return fn(value)
        found = cache.get(value)
        if found is None:
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            found = cache[value] = tuple(fn(value))
        return list(found)

    check.__doc__ = fn.__doc__
    check.__name__ = fn.__name__
    return check


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def generate_name(base: str) -> str:
    """The API server's generateName: base cut to 58 characters plus 5 random characters."""
    if len(base) > _GENERATE_BASE_MAX:
        base = base[:_GENERATE_BASE_MAX]
    return base + "".join(_rand.choice(_GENERATE_ALPHABET) for _ in range(5))


def _bounded_match(value: Any, max_len: int, regex: re.Pattern[str], error: str) -> list[str]:
    """The shape of upstream's IsDNS1123Label and its kin: a length limit and one pattern."""
    if not isinstance(value, str):
        return ["must be a string"]
    errs: list[str] = []
    if len(value) > max_len:
        errs.append(max_len_error(max_len))
    if not regex.fullmatch(value):
        errs.append(error)
    return errs


@_memoized
def is_dns1123_label(value: Any) -> list[str]:
    return _bounded_match(value, DNS1123_LABEL_MAX, _LABEL_RE, LABEL_ERROR)


@_memoized
def is_dns1123_subdomain(value: Any) -> list[str]:
    return _bounded_match(value, DNS1123_SUBDOMAIN_MAX, _SUBDOMAIN_RE, SUBDOMAIN_ERROR)


def _mask_trailing_dash(value: str) -> str:
    """A generateName prefix may end in '-': validate it as if a character followed."""
    if len(value) > 1 and value.endswith("-"):
        return value[:-2] + "a"
    return value


def name_is_dns_subdomain(value: Any, *, prefix: bool = False) -> list[str]:
    """Validation of `metadata.name` (prefix=False) or `metadata.generateName` (prefix=True)."""
    if prefix and isinstance(value, str):
        value = _mask_trailing_dash(value)
    return is_dns1123_subdomain(value)


def name_is_dns_label(value: Any, *, prefix: bool = False) -> list[str]:
    if prefix and isinstance(value, str):
        value = _mask_trailing_dash(value)
    return is_dns1123_label(value)


@_memoized
def is_qualified_name(value: Any) -> list[str]:
    """Label keys, annotation keys, finalizers: `[prefix/]name`."""
    if not isinstance(value, str):
        return ["must be a string"]
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errs: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        errs = []
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [QUALIFIED_NAME_FORMAT_ERROR]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if name and not _QUALIFIED_RE.fullmatch(name):
        errs.append(QUALIFIED_NAME_ERROR)
    return errs


@_memoized
def is_valid_label_value(value: Any) -> list[str]:
    return _bounded_match(value, LABEL_VALUE_MAX, _LABEL_VALUE_RE, LABEL_VALUE_ERROR)


def _dot_errors(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_config_map_key(value: Any) -> list[str]:
    errs = _bounded_match(value, CONFIG_MAP_KEY_MAX, _CONFIG_MAP_KEY_RE, CONFIG_MAP_KEY_ERROR)
    if not isinstance(value, str):
        return errs
    errs.extend(_dot_errors(value))
    return errs


@_memoized
def is_env_var_name(value: Any) -> list[str]:
    if not isinstance(value, str):
        return ["must be a string"]
    errs: list[str] = []
    if not _ENV_VAR_RE.fullmatch(value):
        errs.append(ENV_VAR_ERROR)
    errs.extend(_dot_errors(value))
    return errs
