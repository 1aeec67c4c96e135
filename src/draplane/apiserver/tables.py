"""meta.k8s.io Table output: `to_table(rt, objs, ...)` turns objects into
`columnDefinitions` + `rows` (`cells`, `object`) with the printer the kind's declaration names
(`draplane.apiserver.strategies`; the parts are in `printing`)."""

from __future__ import annotations

from datetime import datetime

from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver import crtables
from draplane.apiserver.printing import AGE, NAME, Printer, age, human_duration
from draplane.apiserver.strategies.table import strategy_for

__all__ = ["age", "column_definitions", "human_duration", "row_object", "to_table"]


def _printer(rt: ResourceType) -> Printer:
    """The kind's printer: its declaration's, or a custom resource's additionalPrinterColumns."""
    if rt.custom is not None:
        return Printer(
            crtables.columns(rt, NAME, AGE), lambda o, now: crtables.cells(rt, o, now, age)
        )
    return strategy_for(rt).printer


def column_definitions(rt: ResourceType) -> list[Obj]:
    columns = _printer(rt).columns
    return [
        {
            "name": name,
            "type": type_,
            "format": "name" if name == "Name" else "",
            "description": description,
            "priority": priority,
        }
        for name, type_, priority, description in columns
    ]


def row_object(obj: Obj, include_object: str, table_version: str) -> Obj | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{table_version}",
        "metadata": obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {},
    }


def to_table(
    rt: ResourceType,
    objs: list[Obj],
    *,
    now: datetime,
    include_object: str = "Metadata",
    table_version: str = "v1",
    list_metadata: Obj | None = None,
    headers: bool = True,
) -> Obj:
    row_fn = _printer(rt).row
    rows = [
        {"cells": row_fn(obj, now), "object": row_object(obj, include_object, table_version)}
        for obj in objs
    ]
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{table_version}",
        "metadata": dict(list_metadata or {}),
        "columnDefinitions": column_definitions(rt) if headers else [],
        "rows": rows,
    }
