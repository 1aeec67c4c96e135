"""Bounds every object the API server accepts must fit: size, nesting depth, JSON-only values.

kube-apiserver caps request bodies at 3 MiB; draplane applies the same figure to every decoded
body (after YAML aliases are expanded) and to every object a patch or an apply produces, so a
small request cannot store, or build in memory, a large object. Nesting is capped at
`MAX_DEPTH` levels, well below what the JSON encoder can write (254 levels, less what a list,
Table or watch event wraps around an object).
"""

from __future__ import annotations

import threading
from typing import Any

import orjson

from draplane.api import errors

MAX_OBJECT_BYTES = 3 * 1024 * 1024
"""kube-apiserver's MaxRequestBodyBytes; here also the bound on every stored object."""
MAX_DEPTH = 128
"""Nested objects and arrays an object may hold (the object itself is level 1)."""
MAX_JSON_PATCH_OPERATIONS = 10_000
"""kube-apiserver's maxJSONPatchOperations."""
JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024
"""kube-apiserver's JSONPatchMaxCopyBytes: what all `copy` operations of a patch may add."""

_ENCODER_DEPTH = 254
_PADDING = _ENCODER_DEPTH - MAX_DEPTH


class _Padding(threading.local):
    """A chain of `_PADDING` nested lists around one slot, built once per thread: encoding an
    object in the slot fails exactly when the object is nested deeper than `MAX_DEPTH`."""

    def __init__(self) -> None:
        self.slot: list[Any] = [None]
        chain: list[Any] = self.slot
        for _ in range(_PADDING - 1):
            chain = [chain]
        self.chain = chain


_padding = _Padding()


def too_deep() -> errors.StatusError:
    return errors.bad_request(f"the object is nested more than {MAX_DEPTH} levels deep")


def too_large(what: str = "the object") -> errors.StatusError:
    return errors.too_large(
        f"Request entity too large: {what} is larger than the limit of {MAX_OBJECT_BYTES} bytes"
    )


def encoded_size(value: Any) -> int:
    """Bytes of `value` as compact JSON. 400 when it is nested deeper than `MAX_DEPTH` or holds
    something JSON cannot (a non-string key, an integer beyond 64 bits, bytes, a set)."""
    padding = _padding
    padding.slot[0] = value
    try:
        encoded = orjson.dumps(padding.chain)
    except TypeError as err:
        if "Recursion limit" in str(err):
            raise too_deep() from None
        raise errors.bad_request(f"the object holds a value JSON cannot represent: {err}") from None
    finally:
        padding.slot[0] = None
    return len(encoded) - 2 * _PADDING


def check_object(obj: Any, what: str = "the object") -> int:
    """`encoded_size(obj)`, or 413 when that is more than `MAX_OBJECT_BYTES`."""
    size = encoded_size(obj)
    if size > MAX_OBJECT_BYTES:
        raise too_large(what)
    return size
