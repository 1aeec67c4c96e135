"""Which kinds draplane serves in protobuf, and their envelopes and watch frames.

A kind is served in protobuf only when its whole struct tree is numbered (`unnumbered` is
empty): custom resources (no struct), Table and kinds whose numbering has not landed are
JSON only. `encode_object` wraps a served object in the `k8s\\0` envelope; `watch_frame` is one
frame of a `;stream=watch` response.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any

from draplane.api import errors
from draplane.api.schema.model import Arr, Schemas, Struct, Type, is_struct
from draplane.apiserver.protobuf import length_delimited, wrap
from draplane.apiserver.protobuf_codec import EncodeError, encode

log = logging.getLogger(__name__)

TYPE_META = ("apiVersion", "kind")


@lru_cache(maxsize=1024)
def unnumbered(schemas: Schemas, name: str) -> tuple[str, ...]:
    """The JSON paths (`spec.template.spec.volumes[].name`) in struct `name`'s tree that have
    no protobuf form: a field without a number (other than TypeMeta), a free-form `object`
    without `wire`, a struct keeping unknown fields. Empty: the kind is fully numbered."""
    out: list[str] = []
    _walk(schemas, name, "", set(), out)
    return tuple(out)


def message_structs(schemas: Schemas, name: str) -> list[Struct]:
    """The registered structs of struct `name`'s tree (itself included), as the codec reaches
    them: through nested fields and the structs a free-form field's `wire` names."""
    seen: set[str] = set()
    _walk(schemas, name, "", seen, [])
    return [schemas.structs[n] for n in sorted(seen) if n in schemas.structs]


def _walk(schemas: Schemas, name: str, prefix: str, seen: set[str], out: list[str]) -> None:
    if name in seen:
        return
    seen.add(name)
    found = schemas.structs.get(name)
    if found is None:
        out.append(f"{prefix or '.'} (unregistered struct {name})")
        return
    if found.preserve:
        out.append(f"{prefix or '.'} (unknown fields kept)")
    for fld in found.fields:
        path = f"{prefix}.{fld.name}" if prefix else fld.name
        if fld.tag == 0:
            if fld.name not in TYPE_META:
                out.append(path)
            continue
        leaf, path = _leaf(fld.type, path)
        if leaf == "object" and is_struct(fld.wire):
            _walk(schemas, fld.wire, path, seen, out)
        elif leaf == "object" and fld.wire != "raw":
            out.append(f"{path} (free-form)")
        elif is_struct(leaf):
            _walk(schemas, leaf, path, seen, out)


def _leaf(t: Type, path: str) -> tuple[str, str]:
    while not isinstance(t, str):
        if isinstance(t, Arr):
            t, path = t.item, path + "[]"
        else:
            t, path = t.value, path + "{}"
    return t, path


# -- kinds, envelopes and watch frames -------------------------------------------------------

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_META_KINDS = frozenset({"Status", "DeleteOptions", "PartialObjectMetadata", "WatchEvent"})
_META_KINDS |= {"PartialObjectMetadataList"}


def struct_name(schemas: Schemas, api_version: str, kind: str) -> str | None:
    """The struct of a body of apiVersion/kind: a served kind's (custom resources have none),
    or a meta/v1 one (Status, DeleteOptions, PartialObjectMetadata, ...)."""
    group, _, version = api_version.rpartition("/")
    found = schemas.kind_struct(group, version, kind)
    if found is not None:
        return found.name
    if kind in _META_KINDS and group in ("", "meta.k8s.io"):
        return META + kind
    return None


def servable(schemas: Schemas, api_version: str, kind: str) -> str | None:
    """The struct of apiVersion/kind when it is fully numbered (protobuf can carry it)."""
    name = struct_name(schemas, api_version, kind)
    return name if name is not None and not unnumbered(schemas, name) else None


def encode_object(schemas: Schemas, obj: dict[str, Any]) -> bytes:
    """`obj` in the `k8s\\0` envelope; EncodeError when its kind cannot be served in protobuf."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    name = servable(schemas, api_version, kind)
    if name is None:
        raise EncodeError(f"{api_version} {kind} has no protobuf form")
    return wrap(api_version, kind, encode(schemas, name, obj))


def watch_frame(schemas: Schemas, event_type: str, obj: dict[str, Any]) -> bytes:
    """One frame of a protobuf watch stream, as upstream's streaming serializer writes it:
    a 4-byte big-endian length, then metav1.WatchEvent{type, object: RawExtension{raw}} without
    an envelope (the stream serializer is the raw one), whose raw is the enveloped object. An
    object that cannot be encoded ends the stream for the client with an ERROR event (a 500
    Status): its informer lists again, and a list falls back to JSON."""
    try:
        raw = encode_object(schemas, obj)
    except EncodeError as err:
        log.warning("watch event not sent in protobuf: %s", err)
        event_type, raw = "ERROR", encode_object(schemas, errors.internal(str(err)).status())
    event = length_delimited(1, event_type.encode()) + length_delimited(2, length_delimited(1, raw))
    return len(event).to_bytes(4, "big") + event
