"""Warnings of the request being served, sent back as `Warning: 299 - "..."` HTTP headers.

The HTTP layer opens a `collect()` scope around each request; anything on the request path
calls `add(message)`. Outside a scope (in-process clients) warnings are dropped, as client-go
drops them without a handler.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CURRENT: ContextVar[list[str] | None] = ContextVar("draplane_warnings", default=None)


def add(message: str) -> None:
    current = _CURRENT.get()
    if current is not None and message not in current:
        current.append(message)


@contextmanager
def collect() -> Iterator[list[str]]:
    """A scope whose warnings end up in the yielded list (each message once)."""
    collected: list[str] = []
    token = _CURRENT.set(collected)
    try:
        yield collected
    finally:
        _CURRENT.reset(token)


def header_value(message: str) -> str:
    """RFC 7234 warning-value with code 299 and agent "-", as k8s.io/apiserver writes it."""
    escaped = message.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'
