"""PATCH bodies: RFC 6902 JSON patch, RFC 7386 merge patch, strategic merge patch, by content type.

Pure functions: inputs are never mutated. Errors are Status errors as kube-apiserver's patch
handler returns them: 400 for a body that is not a patch of that type, 422 Invalid for a patch
that cannot be applied (a failed `test` op included), 413 for more than 10 000 operations. The
patched object, and for a JSON patch every intermediate one, must fit `limits.MAX_OBJECT_BYTES`
(413); a JSON patch's `copy` operations may add at most `limits.JSON_PATCH_MAX_COPY_BYTES` (422).
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors, limits
from draplane.api.errors import unprocessable
from draplane.api.kinds import ResourceType
from draplane.api.limits import (
    JSON_PATCH_MAX_COPY_BYTES,
    MAX_JSON_PATCH_OPERATIONS,
    MAX_OBJECT_BYTES,
    encoded_size,
)
from draplane.api.meta import Obj, deep_copy
from draplane.api.schema.model import Schemas
from draplane.api.strategic_merge import apply_strategic_merge_patch, json_kind

__all__ = [
    "JSON_PATCH",
    "MAX_JSON_PATCH_OPERATIONS",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
    "json_equal",
    "patch_object",
]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"


def patch_object(
    obj: Obj, patch: Any, content_type: str, rt: ResourceType, schemas: Schemas
) -> Obj:
    """Apply `patch` (already JSON-decoded) to `obj` according to the request's Content-Type
    (a strategic merge patch merges as kind `rt` in `schemas`)."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type == JSON_PATCH:
        patched = apply_json_patch(obj, patch)
    elif media_type == MERGE_PATCH:
        patched = apply_merge_patch(obj, patch)
    elif media_type == STRATEGIC_MERGE_PATCH:
        patched = apply_strategic_merge_patch(obj, patch, rt, schemas)
    else:
        raise errors.unsupported_media_type(content_type)
    limits.check_object(patched, "the patched object")
    return patched


# --- RFC 7386 merge patch ---------------------------------------------------------------------


def apply_merge_patch(obj: Obj, patch: Any) -> Obj:
    """RFC 7386: objects merge recursively, null deletes a key, anything else replaces."""
    if not isinstance(patch, dict):
        # kube-apiserver: a null body is ErrBadJSONPatch (400); any other non-object replaces
        # the whole document, which then cannot be decoded into the kind (400 as well).
        raise errors.bad_request(
            f"Invalid JSON Patch: a merge patch must be a JSON object, got {json_kind(patch)}"
        )
    out = deep_copy(obj)
    _merge_into(out, patch)
    return out


def _merge_into(target: Obj, patch: Obj) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            if not isinstance(current, dict):
                current = target[key] = {}
            _merge_into(current, value)
        else:
            target[key] = _fresh(value)


def _fresh(value: Any) -> Any:
    if isinstance(value, dict):
        return deep_copy(value)
    if isinstance(value, list):
        copied: list[Any] = deep_copy({"v": value})["v"]
        return copied
    return value


# --- RFC 6902 JSON patch ----------------------------------------------------------------------


class _Budget:
    """The patched document's JSON size as operations change it, and what `copy` operations
    added: a patch may not grow the object past `MAX_OBJECT_BYTES` at any step, nor copy more
    than `JSON_PATCH_MAX_COPY_BYTES` in all (kube-apiserver's JSONPatchMaxCopyBytes)."""

    def __init__(self, doc: Any) -> None:
        self.size = encoded_size(doc)
        self.copied = 0

    def copy(self, size: int) -> None:
        self.copied += size
        if self.copied > JSON_PATCH_MAX_COPY_BYTES:
            raise unprocessable(
                "Unable to complete the copy, the accumulated size increase of copy is "
                f"{self.copied}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}"
            )

    def grow(self, size: int) -> None:
        self.size += size
        if self.size > MAX_OBJECT_BYTES:
            raise limits.too_large("the object being patched")

    def shrink(self, value: Any) -> None:
        self.size -= encoded_size(value)


def apply_json_patch(obj: Obj, ops: Any) -> Obj:
    """RFC 6902 add/remove/replace/move/copy/test over a copy of `obj`, within `_Budget`."""
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(ops)} into Go value of type jsonpatch.Patch"
        )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(ops)}"
        )
    budget = _Budget(obj)
    doc: Any = deep_copy(obj)
    for op in ops:
        doc = _apply_op(doc, op, budget)
    if not isinstance(doc, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(doc)} into Go value of type "
            "map[string]interface {}"
        )
    return doc


def _apply_op(doc: Any, op: Obj, budget: _Budget) -> Any:
    kind = op.get("op")
    if kind == "test":
        path = _pointer(op, "path")
        if "value" not in op:
            raise unprocessable(f"testing value {op.get('path')} failed: missing value")
        found, actual = _lookup(doc, path)
        if not found or not json_equal(actual, op["value"]):
            raise unprocessable(f"testing value {op['path']} failed: test failed")
        return doc
    if kind == "add":
        path = _pointer(op, "path")
        value, size = _value(op)
        return _add(doc, path, value=value, size=size, op=op, budget=budget)
    if kind == "remove":
        doc, removed = _remove(doc, _pointer(op, "path"), op=op)
        budget.shrink(removed)
        return doc
    if kind == "replace":
        path = _pointer(op, "path")
        value, size = _value(op)
        if not _lookup(doc, path)[0]:
            raise unprocessable(
                f"replace operation does not apply: doc is missing key: {op['path']}: missing value"
            )
        doc, removed = _remove(doc, path, op=op)
        budget.shrink(removed)
        return _add(doc, path, value=value, size=size, op=op, budget=budget)
    if kind in ("move", "copy"):
        source = _pointer(op, "from")
        target = _pointer(op, "path")
        found, value = _lookup(doc, source)
        if not found:
            raise unprocessable(
                f"{kind} operation does not apply: doc is missing from path: "
                f"{op.get('from')}: missing value"
            )
        if kind == "copy":
            size = encoded_size(value)
            budget.copy(size)
            return _add(doc, target, value=_fresh(value), size=size, op=op, budget=budget)
        if target[: len(source)] == source and len(target) > len(source):
            raise unprocessable(
                f"move operation does not apply: cannot move {op['from']} into its own "
                f"child {op['path']}"
            )
        # The moved value leaves its old place: it needs no copy and adds nothing but its key.
        doc, value = _remove(doc, source, op=op)
        return _add(doc, target, value=value, size=0, op=op, budget=budget)
    raise unprocessable(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")


def _pointer(op: Obj, field: str) -> list[str]:
    kind = op.get("op")
    raw = op.get(field)
    if not isinstance(raw, str):
        raise unprocessable(f"{kind} operation failed to decode {field}")
    if raw == "":
        return []
    if not raw.startswith("/"):
        raise unprocessable(f"{kind} operation does not apply: invalid JSON pointer {raw!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in raw[1:].split("/")]


def _value(op: Obj) -> tuple[Any, int]:
    """A fresh copy of the operation's value, and its JSON size."""
    if "value" not in op:
        raise unprocessable(f"{op['op']} operation does not apply: missing value for {op['path']}")
    return _fresh(op["value"]), encoded_size(op["value"])


def _index(container: list[Any], token: str, *, allow_end: bool, op: Obj) -> int:
    if allow_end and token == "-":
        return len(container)
    limit = len(container) if allow_end else len(container) - 1
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")) or int(token) > limit:
        raise unprocessable(
            f"{op.get('op')} operation does not apply: Unable to access invalid index: "
            f"{token} at {op.get('path')}"
        )
    return int(token)


def _lookup(doc: Any, path: list[str]) -> tuple[bool, Any]:
    current = doc
    for token in path:
        if isinstance(current, dict):
            if token not in current:
                return False, None
            current = current[token]
        elif isinstance(current, list):
            if not token.isdigit() or int(token) >= len(current):
                return False, None
            current = current[int(token)]
        else:
            return False, None
    return True, current


def _parent(doc: Any, path: list[str], *, op: Obj) -> Any:
    found, parent = _lookup(doc, path[:-1])
    if not found or not isinstance(parent, dict | list):
        raise unprocessable(
            f"{op.get('op')} operation does not apply: doc is missing path: "
            f'"{op.get("path")}": missing value'
        )
    return parent


def _add(doc: Any, path: list[str], *, value: Any, size: int, op: Obj, budget: _Budget) -> Any:
    """Add `value` (of JSON size `size`) at `path`; what it replaces leaves the budget first."""
    if not path:
        budget.shrink(doc)
        budget.grow(size)
        return value
    parent = _parent(doc, path, op=op)
    if isinstance(parent, dict):
        if path[-1] in parent:
            budget.shrink(parent[path[-1]])
        budget.grow(size + len(path[-1]) + 4)
        parent[path[-1]] = value
    else:
        index = _index(parent, path[-1], allow_end=True, op=op)
        budget.grow(size + 1)
        parent.insert(index, value)
    return doc


def _remove(doc: Any, path: list[str], *, op: Obj) -> tuple[Any, Any]:
    if not path:
        return None, doc
    parent = _parent(doc, path, op=op)
    if isinstance(parent, dict):
        if path[-1] not in parent:
            raise unprocessable(
                f"error in {op.get('op')} for path: '{op.get('path')}': "
                f"Unable to remove nonexistent key: {path[-1]}: missing value"
            )
        return doc, parent.pop(path[-1])
    return doc, parent.pop(_index(parent, path[-1], allow_end=False, op=op))


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python's ==, `true` is not `1` and `1` equals `1.0`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(json_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)
