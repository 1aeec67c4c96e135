"""Content negotiation: request bodies in (JSON, YAML, protobuf, patch types) and the
response form out (object, Table, PartialObjectMetadata) from the Accept header.

Bodies are capped at 3 MiB (413), and so is what they decode to (YAML aliases expanded); nesting
deeper than `limits.MAX_DEPTH` is one 400 whatever the encoding. A body whose content type is not
understood is a 415; one that does not parse (or does not decompress) is a 400. Every failure is
a `StatusError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from draplane.api import errors, limits
from draplane.api.limits import MAX_JSON_PATCH_OPERATIONS
from draplane.api.strategic_merge import json_kind
from draplane.apiserver import protobuf, yamldecode
from draplane.apiserver.strategies.table import protobuf_schema

MAX_BODY = limits.MAX_OBJECT_BYTES

JSON = "application/json"
YAML = "application/yaml"
YAML_TYPES = (YAML, "application/x-yaml", "text/yaml")
JSON_PATCH_BODIES = ("application/merge-patch+json", "application/strategic-merge-patch+json")
"""Patch types whose body is a JSON object (checked for duplicate fields)."""
PATCH_TYPES = frozenset(
    {
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    }
)


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


async def read_body(request: web.Request) -> bytes:
    """The request body, refusing more than MAX_BODY bytes without reading them all."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise errors.too_large()
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.content.iter_chunked(64 * 1024):
            size += len(chunk)
            if size > MAX_BODY:
                raise errors.too_large()
            chunks.append(chunk)
    except web.RequestPayloadError as err:
        # A body that does not match its Content-Encoding, or a truncated one. The rest of the
        # body is unusable: end it and close the connection once the Status is sent (aiohttp
        # would otherwise read on after the response and log the same error).
        request.content.feed_eof()
        request.protocol.close()
        cause = err.__cause__ or err
        detail = getattr(cause, "message", "") or str(cause)
        raise errors.bad_request(f"couldn't read the request body: {detail}") from None
    return b"".join(chunks)


def _parse_json(body: bytes) -> Any:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        if "depth limit" in str(err):
            raise limits.too_deep() from None
        raise errors.bad_request(f"couldn't decode JSON body: {err}") from None
    limits.check_object(value, "the decoded body")
    return value


def _parse_yaml(body: bytes) -> Any:
    return yamldecode.load(body)


def decode_object(body: bytes, content_type: str) -> dict[str, Any]:
    """A POST/PUT body: JSON (also when no content type is sent), YAML or protobuf."""
    mt = media_type(content_type)
    if not body.strip():
        raise errors.bad_request("the request body is empty")
    if mt in ("", JSON, "*/*"):
        value = _parse_json(body)
    elif mt in YAML_TYPES:
        value = _parse_yaml(body)
    elif mt == protobuf.CONTENT_TYPE:
        value = protobuf.decode(body, protobuf_schema)
        limits.check_object(value, "the decoded body")
    else:
        raise errors.unsupported_media_type(content_type)
    if not isinstance(value, dict):
        raise errors.bad_request("the request body must be a JSON or YAML object")
    return value


def decode_patch(body: bytes, content_type: str) -> Any:
    mt = media_type(content_type)
    if mt not in PATCH_TYPES:
        raise errors.unsupported_media_type(content_type)
    if not body.strip():
        raise errors.bad_request("the patch body is empty")
    # An apply patch may be YAML or JSON (a subset of YAML).
    value = _parse_yaml(body) if mt == "application/apply-patch+yaml" else _parse_json(body)
    if mt == "application/json-patch+json":
        if not isinstance(value, list):
            raise errors.bad_request("a JSON patch must be a list of operations")
        if len(value) > MAX_JSON_PATCH_OPERATIONS:
            raise errors.too_large(
                f"The allowed maximum operations in a JSON patch is "
                f"{MAX_JSON_PATCH_OPERATIONS}, got {len(value)}"
            )
    elif not isinstance(value, dict):
        raise errors.bad_request(f"a {mt} body must be an object")
    else:
        _check_patch_metadata(value)
    return value


def _check_patch_metadata(patch: dict[str, Any]) -> None:
    """A merge, strategic or apply patch holds (part of) an object: its `metadata` is an
    ObjectMeta or null, as decoding the patched object into the kind would require."""
    md = patch.get("metadata")
    if md is not None and not isinstance(md, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(md)} into Go struct field .metadata of type "
            "v1.ObjectMeta"
        )


def decode_delete_options(body: bytes, content_type: str) -> dict[str, Any]:
    if not body.strip():
        return {}
    options = decode_object(body, content_type)
    kind = options.get("kind")
    if kind not in (None, "", "DeleteOptions"):
        raise errors.bad_request(f"expected DeleteOptions in the request body, got {kind}")
    return options


@dataclass(frozen=True)
class ResponseForm:
    """`object` (the plain resource), `table` or `metadata` (PartialObjectMetadata[List])."""

    form: str = "object"
    version: str = "v1"


def response_form(accept: str) -> ResponseForm:
    """The first Accept entry draplane can serve; anything JSON-compatible means `object`."""
    for entry in accept.split(","):
        _, *param_parts = (p.strip() for p in entry.split(";"))
        params = dict(p.partition("=")[::2] for p in param_parts if "=" in p)
        target = params.get("as", "")
        if not target:
            return ResponseForm()
        if params.get("g") != "meta.k8s.io" or params.get("v") not in ("v1", "v1beta1"):
            continue
        if target == "Table":
            return ResponseForm("table", params["v"])
        if target in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            return ResponseForm("metadata", params["v"])
    if not accept.strip():
        return ResponseForm()
    raise errors.not_acceptable(
        f"only the following media types are accepted: application/json, {YAML}, "
        f"application/json;as=Table;v=v1;g=meta.k8s.io"
    )
