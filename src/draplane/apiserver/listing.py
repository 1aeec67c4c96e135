"""List helpers: selector filtering, `limit`/`continue` pagination and List envelopes."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

import orjson

from draplane.api import errors
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.selectors import FieldSelector, LabelSelector

FilterFn = Callable[[Obj], bool]


def make_filter(rt: ResourceType, label_selector: str, field_selector: str) -> FilterFn:
    labels = LabelSelector.parse(label_selector) if label_selector else None
    fields = FieldSelector.parse(field_selector, rt) if field_selector else None
    if labels is None and fields is None:
        return _match_all
    if fields is None and labels is not None:
        return lambda obj: labels.matches((obj.get("metadata") or {}).get("labels") or {})
    if labels is None and fields is not None:
        return fields.matches
    assert labels is not None and fields is not None
    return lambda obj: (
        fields.matches(obj) and labels.matches((obj.get("metadata") or {}).get("labels") or {})
    )


def _match_all(obj: Obj) -> bool:
    return True


def encode_continue(revision: int, start: str) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = orjson.loads(base64.urlsafe_b64decode(padded))
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError, binascii.Error, orjson.JSONDecodeError) as err:
        raise errors.bad_request(f"continue key is not valid: {err}") from None


def object_position(obj: Obj) -> str:
    md = obj.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def paginate(
    items: list[Obj], *, limit: int, continue_: str, revision: int
) -> tuple[list[Obj], str, int | None]:
    """(page, continue token or "", remainingItemCount or None). `items` sorted by position."""
    if continue_:
        token_rv, start = decode_continue(continue_)
        revision = token_rv
        items = [o for o in items if object_position(o) > start]
    if limit <= 0 or len(items) <= limit:
        return items, "", None
    page = items[:limit]
    return page, encode_continue(revision, object_position(page[-1])), len(items) - limit


def list_envelope(
    rt: ResourceType, items: list[Obj], revision: int, continue_: str, remaining: int | None
) -> Obj:
    md: Obj = {"resourceVersion": str(revision)}
    if continue_:
        md["continue"] = continue_
    if remaining is not None:
        md["remainingItemCount"] = remaining
    return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": md, "items": items}
