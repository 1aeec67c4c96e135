"""resource.Quantity parsing and the scheduler's rounding conveniences."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from draplane.api.quantity import (
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    bytes_value,
    cpu_millis,
    is_quantity,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("4", Fraction(4), id="integer"),
        pytest.param("0", Fraction(0), id="zero"),
        pytest.param("500m", Fraction(1, 2), id="milli"),
        pytest.param("1n", Fraction(1, 10**9), id="nano"),
        pytest.param("2u", Fraction(2, 10**6), id="micro"),
        pytest.param("1k", Fraction(1000), id="kilo"),
        pytest.param("1M", Fraction(10**6), id="mega"),
        pytest.param("1G", Fraction(10**9), id="giga"),
        pytest.param("1T", Fraction(10**12), id="tera"),
        pytest.param("1P", Fraction(10**15), id="peta"),
        pytest.param("1E", Fraction(10**18), id="exa"),
        pytest.param("1Ki", Fraction(1024), id="kibi"),
        pytest.param("32Gi", Fraction(32 * 2**30), id="gibi"),
        pytest.param("1Ei", Fraction(2**60), id="exbi"),
        pytest.param("1e3", Fraction(1000), id="exponent"),
        pytest.param("1E-3", Fraction(1, 1000), id="negative-exponent"),
        pytest.param("1.5", Fraction(3, 2), id="decimal"),
        pytest.param(".5", Fraction(1, 2), id="leading-dot"),
        pytest.param("5.", Fraction(5), id="trailing-dot"),
        pytest.param("1.5Gi", Fraction(3 * 2**29), id="decimal-binary"),
        pytest.param("+1k", Fraction(1000), id="plus-sign"),
        pytest.param("-1", Fraction(-1), id="negative"),
        pytest.param(2, Fraction(2), id="json-int"),
        pytest.param(0.5, Fraction(1, 2), id="json-float"),
    ],
)
def test_parse_quantity(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", ERR_FORMAT_WRONG, id="empty"),
        pytest.param(".", ERR_FORMAT_WRONG, id="only-dot"),
        pytest.param("abc", ERR_FORMAT_WRONG, id="letters"),
        pytest.param("Gi", ERR_FORMAT_WRONG, id="suffix-only"),
        pytest.param("1.2.3", ERR_FORMAT_WRONG, id="two-dots"),
        pytest.param("1 Gi", ERR_FORMAT_WRONG, id="space"),
        pytest.param("1Gb", ERR_FORMAT_WRONG, id="bad-suffix-char"),
        pytest.param("1ee3", ERR_SUFFIX, id="double-exponent"),
        pytest.param("1Kii", ERR_SUFFIX, id="unknown-suffix"),
        pytest.param(None, ERR_FORMAT_WRONG, id="none"),
        pytest.param(True, ERR_FORMAT_WRONG, id="bool"),
    ],
)
def test_parse_quantity_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        parse_quantity(text)
    assert not is_quantity(text)


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        pytest.param("1", 1000, id="one-core"),
        pytest.param("100m", 100, id="milli"),
        pytest.param("1.5", 1500, id="decimal"),
        pytest.param("1n", 1, id="rounds-up"),
        pytest.param("0", 0, id="zero"),
    ],
)
def test_cpu_millis(text: str, millis: int) -> None:
    assert cpu_millis(text) == millis


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("32Gi", 34359738368, id="gibi"),
        pytest.param("1k", 1000, id="kilo"),
        pytest.param("1.5", 2, id="rounds-up"),
        pytest.param("110", 110, id="pods"),
        pytest.param("100m", 1, id="milli-rounds-up"),
    ],
)
def test_bytes_value(text: str, value: int) -> None:
    assert bytes_value(text) == value
