"""Go's time.Duration strings (`1h2m3.5s`, `300ms`), the JSON form of metav1.Duration, in
integer nanoseconds: `parse_duration` reads what Go's time.ParseDuration reads, and
`format_duration` writes what Duration.String() writes."""

from __future__ import annotations

import re

_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9}
_UNITS.update({"m": 60 * 10**9, "h": 3600 * 10**9})
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (`1h2m3.5s`, `-300ms`, `0`)."""
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text.removeprefix("+"))
    if body == "0":
        return 0
    pos, total = 0, 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != pos:
            break
        number, unit = match.groups()
        whole, _, frac = number.partition(".")
        scale = _UNITS[unit]
        total += int(whole or 0) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)
        pos = match.end()
    if pos != len(body) or not body:
        raise ValueError(f"invalid duration {text!r}")
    return sign * total


def format_duration(ns: int) -> str:
    """Go's `time.Duration.String()`: `1h0m0s`, `1.5s`, `500ms`, `0s`."""
    if ns == 0:
        return "0s"
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u < 10**9:
        for unit, size in (("ns", 1), ("µs", 10**3), ("ms", 10**6)):
            if u < size * 1000:
                return sign + _fraction(u, size) + unit
    hours, rest = divmod(u, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    text = _fraction(rest, 10**9) + "s"
    if hours:
        text = f"{hours}h{minutes}m{text}"
    elif minutes:
        text = f"{minutes}m{text}"
    return sign + text


def _fraction(value: int, size: int) -> str:
    whole, rest = divmod(value, size)
    if not rest:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}." + f"{rest:0{digits}d}".rstrip("0")
