"""The forms a watch is sent in: the plain object or its PartialObjectMetadata (encoded once per
event for every watcher, `httpwatch.SharedForm`), in JSON lines or, when the Accept header
prefers protobuf and the kind has a protobuf form, protobuf WatchEvent frames; or a one-row
Table per event (per watcher, JSON only)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from draplane.api.handler import WatchEvent
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.apiserver import httpwatch, negotiation, protobuf_serving, tables
from draplane.apiserver.negotiation import ResponseForm
from draplane.clock import Clock


def metadata_only(obj: Obj, version: str) -> Obj:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": obj.get("metadata") or {},
    }


def _event_metadata(version: str, event: WatchEvent) -> Obj:
    return metadata_only(event.object, version)


PLAIN = httpwatch.SharedForm()
_METADATA_FORMS = {
    version: httpwatch.SharedForm(f"metadata/{version}", partial(_event_metadata, version))
    for version in ("v1", "v1beta1")
}
"""PartialObjectMetadata watch forms by meta.k8s.io version (what `response_form` accepts)."""


def watch_form(
    accept: str,
    rt: ResourceType,
    form: ResponseForm,
    schemas: Schemas,
    *,
    include_object: str,
    clock: Clock,
) -> httpwatch.Transform | httpwatch.SharedForm:
    """How the events of a watch of `rt` are sent, from the response form and Accept header."""
    if form.form in ("object", "metadata"):
        api_version, kind = rt.api_version, rt.kind
        if form.form == "metadata":
            api_version, kind = f"meta.k8s.io/{form.version}", "PartialObjectMetadata"
        numbered = protobuf_serving.servable(schemas, api_version, kind) is not None
        media = negotiation.output_media_type(accept, kind, protobuf_ok=numbered)
        shared = PLAIN if form.form == "object" else _METADATA_FORMS[form.version]
        if media != negotiation.PROTOBUF:
            return shared
        return replace(
            shared,
            key="protobuf/" + shared.key,
            encoding=partial(protobuf_serving.watch_frame, schemas),
            content_type=negotiation.PROTOBUF + ";stream=watch",
        )
    negotiation.output_media_type(accept, "Table", protobuf_ok=False)  # 406: protobuf only
    headers_sent = False

    def to_table(event: WatchEvent) -> Obj:
        nonlocal headers_sent
        rv = (event.object.get("metadata") or {}).get("resourceVersion", "")
        rows = [] if event.type == "BOOKMARK" else [event.object]
        table = tables.to_table(
            rt,
            rows,
            now=clock.now(),
            include_object=include_object,
            table_version=form.version,
            list_metadata={"resourceVersion": rv},
            headers=not headers_sent and bool(rows),
        )
        headers_sent = headers_sent or bool(rows)
        return table

    return to_table
