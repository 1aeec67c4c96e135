"""LIST: selector filtering, the state a list reads (current or a snapshot, see `listoptions`),
`limit`/`continue` pagination and List envelopes.

A `continue` token names the revision of the first page; later pages read the snapshot at that
revision, so the pages form one consistent list. A token older than the retained history is a
410 Expired that carries a token for the rest of the list at the latest revision (rv -1).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from draplane.api import errors
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.selectors import FieldSelector, LabelSelector
from draplane.apiserver import listoptions
from draplane.apiserver.strategies.table import strategy_for
from draplane.apiserver.watchcache import WatchCache
from draplane.storage.errors import RevisionTooOld
from draplane.storage.interface import Storage

FilterFn = Callable[[Obj], bool]


def make_filter(rt: ResourceType, label_selector: str, field_selector: str) -> FilterFn:
    labels = LabelSelector.parse(label_selector) if label_selector else None
    fields = (
        FieldSelector.parse(field_selector, strategy_for(rt).selectable_fields)
        if field_selector
        else None
    )
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
    """(revision, start position); revision -1 means the latest. 400 for a bad token."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = orjson.loads(base64.urlsafe_b64decode(padded))
        version, rv, start = data.get("v"), int(data.get("rv") or 0), str(data.get("start") or "")
    except (ValueError, TypeError, AttributeError, binascii.Error, orjson.JSONDecodeError) as err:
        raise _bad_continue(f"continue key is not valid: {err}") from None
    if version != "meta.k8s.io/v1":
        raise _bad_continue(
            f"continue key is not valid: server does not recognize this encoded version {version}"
        )
    if rv == 0:
        raise _bad_continue(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        )
    if not start:
        raise _bad_continue(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
        )
    return rv, start


def _bad_continue(detail: str) -> errors.StatusError:
    return errors.bad_request(f"invalid continue token: {detail}")


def object_position(obj: Obj) -> str:
    md = obj.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def paginate(items: list[Obj], *, limit: int, revision: int) -> tuple[list[Obj], str, int | None]:
    """(page, continue token or "", remainingItemCount or None). `items` sorted by position."""
    if limit <= 0 or len(items) <= limit:
        return items, "", None
    page = items[:limit]
    return page, encode_continue(revision, object_position(page[-1])), len(items) - limit


@dataclass(frozen=True)
class ListSource:
    storage: Storage
    watch_cache: WatchCache
    fresh_timeout: float = listoptions.FRESH_TIMEOUT

    async def wait_fresh(self, revision: int) -> None:
        """Block until the store reached `revision`; 504 Too large resource version after
        `fresh_timeout`, as kube-apiserver's watch cache does."""
        if revision <= self.storage.revision:
            return
        if not await self.watch_cache.wait_until_fresh(revision, self.fresh_timeout):
            raise listoptions.too_large(revision, self.storage.revision)

    async def read(
        self, rt: ResourceType, namespace: str, *, resource_version: str, match: str, limit: int
    ) -> tuple[list[Obj], int, bool]:
        """(objects sorted by position, their revision, whether `limit` applies)."""
        read = listoptions.plan_list(resource_version=resource_version, match=match, limit=limit)
        await self.wait_fresh(read.min_revision)
        if read.exact is None:
            objs, revision = await self.storage.list(rt.key, namespace or None)
            return objs, revision, read.paginate
        try:
            objs = await self.storage.list_at(rt.key, namespace or None, read.exact)
        except RevisionTooOld:
            raise errors.expired(listoptions.LIST_TOO_OLD) from None
        return objs, read.exact, True

    async def read_continue(
        self, rt: ResourceType, namespace: str, *, token: str, resource_version: str
    ) -> tuple[list[Obj], int]:
        """The rest of a paginated list: (objects after the token's position, revision)."""
        token_rv, start = decode_continue(token)
        if resource_version not in ("", "0"):
            raise errors.bad_request(
                "specifying resource version is not allowed when using continue"
            )
        if token_rv < 0:
            objs, revision = await self.storage.list(rt.key, namespace or None)
        else:
            revision = token_rv
            try:
                objs = await self.storage.list_at(rt.key, namespace or None, token_rv)
            except RevisionTooOld:
                expired = errors.expired(listoptions.CONTINUE_TOO_OLD)
                expired.list_meta["continue"] = encode_continue(-1, start)
                raise expired from None
        return [o for o in objs if object_position(o) > start], revision


def list_envelope(
    rt: ResourceType, items: list[Obj], revision: int, continue_: str, remaining: int | None
) -> Obj:
    md: Obj = {"resourceVersion": str(revision)}
    if continue_:
        md["continue"] = continue_
    if remaining is not None:
        md["remainingItemCount"] = remaining
    return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": md, "items": items}
