"""resource.Quantity parsing: "4", "500m", "32Gi", "1e3", "1.5" -> exact Fractions.

`parse_quantity` raises ValueError with apimachinery's message on bad input; `cpu_millis` and
`bytes_value` round up, as Quantity.MilliValue() and Quantity.Value() do.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

QUANTITY_FORMAT = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{QUANTITY_FORMAT}'"
ERR_SUFFIX = "unable to parse quantity's suffix"

_NUMBER_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_EXPONENT_RE = re.compile(r"[eE]([+-]?[0-9]+)")
_cache: dict[str, Fraction] = {}


def parse_quantity(text: str) -> Fraction:
    """The exact value of a Kubernetes quantity string; ValueError when it is not one."""
    if not isinstance(text, str):
        if isinstance(text, int | float) and not isinstance(text, bool):
            # JSON numbers are accepted as quantities by the Go decoder.
            return Fraction(str(text))
        raise ValueError(ERR_FORMAT_WRONG)
    cached = _cache.get(text)
    if cached is not None:
        return cached
    value = _parse(text)
    if len(_cache) < 4096:
        _cache[text] = value
    return value


def _parse(text: str) -> Fraction:
    if not text:
        raise ValueError(ERR_FORMAT_WRONG)
    m = _NUMBER_RE.match(text)
    assert m is not None  # the pattern matches the empty string
    sign, whole, frac = m.group(1), m.group(2), m.group(3)
    if not whole and not frac:
        raise ValueError(ERR_FORMAT_WRONG)
    suffix = text[m.end() :]
    if suffix and not re.fullmatch(r"[eEinumkKMGTP]*[-+]?[0-9]*", suffix):
        raise ValueError(ERR_FORMAT_WRONG)
    number = Fraction(int(whole or "0")) + (
        Fraction(int(frac), 10 ** len(frac)) if frac else Fraction(0)
    )
    if sign == "-":
        number = -number
    return number * _multiplier(suffix)


def _multiplier(suffix: str) -> Fraction:
    if suffix in _DECIMAL:
        return _DECIMAL[suffix]
    if suffix in _BINARY:
        return Fraction(_BINARY[suffix])
    m = _EXPONENT_RE.fullmatch(suffix)
    if m is not None:
        exp = int(m.group(1))
        return Fraction(10) ** exp
    raise ValueError(ERR_SUFFIX)


def cpu_millis(text: str) -> int:
    """CPU in millicores, rounded up ("100m" -> 100, "1.5" -> 1500, "1n" -> 1)."""
    return math.ceil(parse_quantity(text) * 1000)


def bytes_value(text: str) -> int:
    """The integer value, rounded up ("32Gi" -> 34359738368, "1.5" -> 2)."""
    return math.ceil(parse_quantity(text))


def is_quantity(text: object) -> bool:
    try:
        parse_quantity(text)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True
