"""Content negotiation: request bodies in (JSON, YAML, protobuf, patch types), and out the
response form (object, Table, PartialObjectMetadata) and encoding (JSON or protobuf) from the
Accept header; `respond` is the one encoder of API objects, lists and Status errors.

Bodies are capped at 3 MiB (413), and so is what they decode to (YAML aliases expanded); nesting
deeper than `limits.MAX_DEPTH` is one 400 whatever the encoding. A body whose content type is not
understood is a 415; one that does not parse (or does not decompress) is a 400. Every failure is
a `StatusError`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from draplane.api import errors, limits
from draplane.api.limits import MAX_JSON_PATCH_OPERATIONS
from draplane.api.schema import Schemas
from draplane.api.strategic_merge import json_kind
from draplane.apiserver import protobuf, protobuf_codec, protobuf_serving, yamldecode

log = logging.getLogger(__name__)

MAX_BODY = limits.MAX_OBJECT_BYTES

JSON = "application/json"
PROTOBUF = protobuf.CONTENT_TYPE
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


def decode_object(body: bytes, content_type: str, schemas: Schemas) -> dict[str, Any]:
    """A POST/PUT body: JSON (also when no content type is sent), YAML or protobuf."""
    mt = media_type(content_type)
    if not body.strip():
        raise errors.bad_request("the request body is empty")
    if mt in ("", JSON, "*/*"):
        value = _parse_json(body)
    elif mt in YAML_TYPES:
        value = _parse_yaml(body)
    elif mt == PROTOBUF:
        value = _decode_protobuf(body, schemas)
        limits.check_object(value, "the decoded body")
    else:
        raise errors.unsupported_media_type(content_type)
    if not isinstance(value, dict):
        raise errors.bad_request("the request body must be a JSON or YAML object")
    return value


def _decode_protobuf(
    body: bytes, schemas: Schemas, *, delete_options: bool = False
) -> dict[str, Any]:
    """A protobuf body through the schema codec when its kind is fully numbered, else 415. With
    `delete_options`, a DeleteOptions of any served group version (client-go sends its
    resource's, `v1` or `meta.k8s.io/v1`)."""
    try:
        api_version, kind, raw = protobuf.unwrap(body)
        if delete_options and kind == "DeleteOptions" and _served_version(schemas, api_version):
            name: str | None = protobuf_serving.META + "DeleteOptions"
        else:
            name = protobuf_serving.servable(schemas, api_version, kind)
        if name is not None:
            value = protobuf_codec.decode(schemas, name, raw)
            return {"kind": kind, "apiVersion": api_version, **value}
    except protobuf.WireError as err:
        raise errors.bad_request(f"cannot decode protobuf body: {err}") from err
    raise errors.unsupported_media_type(f"{protobuf.CONTENT_TYPE} ({api_version} {kind})")


def _served_version(schemas: Schemas, api_version: str) -> bool:
    if api_version in ("v1", "meta.k8s.io/v1", "meta.k8s.io/v1beta1"):
        return True
    group, _, version = api_version.rpartition("/")
    return any(g == group and v == version for g, v, _ in schemas.kinds)


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


def decode_delete_options(body: bytes, content_type: str, schemas: Schemas) -> dict[str, Any]:
    if not body.strip():
        return {}
    options: dict[str, Any]
    if media_type(content_type) == PROTOBUF:
        options = _decode_protobuf(body, schemas, delete_options=True)
        limits.check_object(options, "the decoded body")
    else:
        options = decode_object(body, content_type, schemas)
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
    """The first Accept entry (by quality) draplane can serve; anything JSON-compatible means
    `object`."""
    for _, params in _clauses(accept):
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


def _clauses(accept: str) -> list[tuple[str, dict[str, str]]]:
    """The Accept header's (media type, parameters), highest quality first (a stable sort, as
    upstream's goautoneg keeps the order of equal ones); `q=0` entries are refused ones."""
    out: list[tuple[float, int, str, dict[str, str]]] = []
    for index, entry in enumerate(accept.split(",")):
        mt, *param_parts = (p.strip() for p in entry.split(";"))
        params = dict(p.partition("=")[::2] for p in param_parts if "=" in p)
        try:
            quality = float(params.pop("q", "1"))
        except ValueError:
            quality = 1.0
        if quality > 0:
            out.append((-quality, index, mt.lower(), params))
    return [(mt, params) for _, _, mt, params in sorted(out, key=lambda c: c[:2])]


def output_media_type(accept: str, kind: str, *, protobuf_ok: bool) -> str:
    """JSON or PROTOBUF for a response body of `kind`: the first Accept entry naming protobuf
    (`application/vnd.kubernetes.protobuf`, with or without `;stream=watch`) picks protobuf
    when the kind has a protobuf form (`protobuf_ok`), any other entry JSON; an entry whose
    `as=` names another kind is passed over. 406 when protobuf is the only acceptable type and
    the kind has no protobuf form (custom resources, Table, kinds not yet numbered)."""
    wanted_protobuf = False
    for mt, params in _clauses(accept):
        target = params.get("as", "")
        if target and target.removesuffix("List") != kind.removesuffix("List"):
            continue
        if mt == PROTOBUF:
            if protobuf_ok:
                return PROTOBUF
            wanted_protobuf = True
            continue
        return JSON
    if wanted_protobuf:
        raise errors.not_acceptable(
            f"only the following media types are accepted: {JSON}, {YAML}; {kind} has no "
            f"{PROTOBUF} form"
        )
    return JSON


def respond(
    accept: str, obj: dict[str, Any], schemas: Schemas, *, status: int = 200, pretty: bool = False
) -> web.Response:
    """The one response encoder of API objects, lists and Status errors: protobuf when the
    Accept header prefers it and the kind has a protobuf form, JSON otherwise. A Status is sent
    as JSON when nothing else is acceptable, as upstream writes a failed negotiation's error."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    numbered = protobuf_serving.servable(schemas, api_version, kind) is not None
    try:
        mt = output_media_type(accept, kind, protobuf_ok=numbered) if accept else JSON
    except errors.StatusError:
        if kind != "Status":
            raise
        mt = JSON
    if mt == PROTOBUF:
        try:
            body = protobuf_serving.encode_object(schemas, obj)
        except protobuf_codec.EncodeError:
            log.warning("cannot encode %s %s as protobuf; answering JSON", api_version, kind)
        else:
            return web.Response(body=body, status=status, headers={"Content-Type": PROTOBUF})
    body = orjson.dumps(obj, option=orjson.OPT_INDENT_2 if pretty else 0)
    return web.Response(body=body, status=status, content_type=JSON)
