"""Duplicate fields of a JSON body, which strict decoding reports (`duplicate field "a.b"`).

orjson keeps the last of repeated keys silently. Finding repeats exactly needs a slower parse,
so it runs only when a cheap count says there may be some: the `":` sequences of the body
against those of the decoded value encoded again. Each key contributes one to both unless it was
repeated (then the body has more), so equal counts mean no repeats (spaces between a key and
its colon, or escape spellings of quotes inside strings, can hide one; that costs the report,
never the write).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_KEY_END = b'":'


class _Pairs(dict[str, Any]):
    repeated: list[str]


def _pairs(items: list[tuple[str, Any]]) -> _Pairs:
    out = _Pairs()
    out.repeated = []
    for key, value in items:
        if key in out and key not in out.repeated:
            out.repeated.append(key)
        out[key] = value
    return out


def _paths(value: Any, path: str, found: list[str]) -> None:
    if isinstance(value, dict):
        prefix = f"{path}." if path else ""
        for key in getattr(value, "repeated", ()):
            found.append(prefix + key)
        for key, item in value.items():
            _paths(item, prefix + key, found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _paths(item, f"{path}[{i}]", found)


def duplicate_fields(body: bytes, value: Any) -> tuple[str, ...]:
    """The paths of repeated keys of the JSON `body` (already decoded as `value`)."""
    if body.count(_KEY_END) <= orjson.dumps(value).count(_KEY_END):
        return ()
    try:
        parsed = json.loads(body, object_pairs_hook=_pairs)
    except ValueError:
        return ()
    found: list[str] = []
    _paths(parsed, "", found)
    return tuple(found)
