"""What every kind's printer is made of: columns, a row function, and kubectl's ages.

A `Printer` is the columns kube-apiserver prints for a kind in a meta.k8s.io Table and the
function producing one row's cells in column order; each kind's declaration
(`draplane.apiserver.strategies`) names its printer, built from these parts in `printers`,
`workloadprinters` and `networkprinters`. Columns are (name, type, priority, description);
priority-1 columns show only with `kubectl -o wide`. Ages are pre-formatted as kubectl's
`HumanDuration` does, relative to the server clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from draplane.api.meta import Obj
from draplane.clock import parse_time

Column = tuple[str, str, int, str]
"""name, type, priority, description"""
RowFn = Callable[[Obj, datetime], list[Any]]
AgeFn = Callable[[Any], str]

NAME: Column = ("Name", "string", 0, "Name must be unique within a namespace.")
AGE: Column = (
    "Age",
    "string",
    0,
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)


@dataclass(frozen=True)
class Printer:
    columns: list[Column]
    row: RowFn


def human_duration(seconds: float) -> str:
    """kubectl's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // 24 // 365}y"


def age(timestamp: Any, now: datetime) -> str:
    if not timestamp:
        return "<unknown>"
    try:
        return human_duration((now - parse_time(str(timestamp))).total_seconds())
    except (ValueError, TypeError, OverflowError):
        # Not RFC 3339, without a time zone, or out of datetime's range.
        return "<unknown>"


def field(obj: Obj, *path: str) -> str:
    """The string at `path` (nested object keys), or "" when anything on the way is not."""
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else ""


def name(obj: Obj) -> str:
    return field(obj, "metadata", "name")


def with_age(fn: Callable[[Obj], list[Any]], *, age_at: int = -1) -> RowFn:
    """A row function inserting the object's age at `age_at` (-1: last)."""

    def row(obj: Obj, now: datetime) -> list[Any]:
        cells = fn(obj)
        created = age(field(obj, "metadata", "creationTimestamp"), now)
        cells.insert(len(cells) if age_at < 0 else age_at, created)
        return cells

    return row


def aged(fn: Callable[[Obj, AgeFn], list[Any]]) -> RowFn:
    """A row function whose cells format ages themselves (with the server's now)."""
    return lambda obj, now: fn(obj, lambda ts: age(ts, now))


DEFAULT = Printer([NAME, AGE], with_age(lambda o: [name(o)]))
"""Name and age: the columns of a kind with no printer of its own."""
