"""Tables of custom resources and CRDs, as apiextensions-apiserver's table convertor prints
them: Name, then the version's `additionalPrinterColumns` (simple JSONPath: `.a.b[0].c`), or
Age when it declares none; `date` columns print as ages. CRDs print Name and Created At."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import orjson

from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver.printing import Column

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def json_path(obj: Any, path: str) -> Any:
    """The value at a simple JSONPath (`.spec.replicas`, `{.status.conditions[0].type}`)."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    value = obj
    for name, index in _STEP.findall(text):
        if name:
            value = value.get(name) if isinstance(value, dict) else None
        else:
            i = int(index)
            value = value[i] if isinstance(value, list) and i < len(value) else None
        if value is None:
            return None
    return value


def columns(rt: ResourceType, name: Column, age: Column) -> list[Column]:
    custom = rt.custom
    if not custom.columns:
        return [name, age]
    out = [name]
    for c in custom.columns:
        description = c.description or (
            f"Custom resource definition column (in JSONPath format): {c.json_path}"
        )
        out.append((c.name, c.type, c.priority, description))
    return out


def cells(rt: ResourceType, obj: Obj, now: datetime, age: Any) -> list[Any]:
    name = (obj.get("metadata") or {}).get("name", "")
    custom = rt.custom
    if not custom.columns:
        return [name, age((obj.get("metadata") or {}).get("creationTimestamp"), now)]
    out: list[Any] = [name]
    for c in custom.columns:
        value = json_path(obj, c.json_path)
        if value is None:
            out.append(None)
        elif c.type == "date":
            out.append(age(value, now))
        elif isinstance(value, dict | list):
            out.append(orjson.dumps(value).decode())
        elif c.type == "string":
            out.append(value if isinstance(value, str) else orjson.dumps(value).decode())
        else:
            out.append(value)
    return out
