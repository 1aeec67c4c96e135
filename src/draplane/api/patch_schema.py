"""Merge metadata per served kind: the `x-kubernetes-patch-strategy`/`-patch-merge-key` and
`x-kubernetes-list-type`/`-list-map-keys` of each field, read from the kind's schema
(`draplane.api.schema`, the same markers the OpenAPI documents carry) in the `Schemas` of the
Kubernetes version served, as a table.

Paths are dotted from the object root with `[]` for "each list item":
`spec.containers[].ports`. A list absent from the table is atomic; a map absent is granular.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from draplane.api import schema
from draplane.api.kinds import ResourceType
from draplane.api.schema.model import Arr, Field, Schemas, Struct, is_struct

__all__ = ["ATOMIC", "FieldStrategy", "item_path", "schema_for", "strategy_at"]


@dataclass(frozen=True)
class FieldStrategy:
    """How one field merges.

    `patch_strategy` drives strategic merge patch ("merge", "retainKeys", "replace");
    `list_type`/`map_keys` drive server-side apply ("atomic", "set", "map").
    """

    patch_strategy: tuple[str, ...] = ()
    merge_key: str = ""
    list_type: str = "atomic"
    map_keys: tuple[str, ...] = ()

    @property
    def merges(self) -> bool:
        """Strategic merge patch merges this list instead of replacing it."""
        return "merge" in self.patch_strategy

    @property
    def replaces(self) -> bool:
        """`patchStrategy: replace`: a map or list is taken from the patch as a whole."""
        return "replace" in self.patch_strategy


ATOMIC = FieldStrategy()


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_REPLACED = {(_OBJECT_META, "managedFields"): FieldStrategy(("replace",))}
"""draplane's own strategy: a patch's managedFields replace the stored ones as a whole."""


def _strategy(fld: Field) -> FieldStrategy | None:
    """The merge metadata of one field, as server-side apply reads upstream's OpenAPI: a list
    with a merge key is a map keyed by it, a merged list of scalars a set."""
    patch_strategy = tuple(fld.patch_strategy.split(",")) if fld.patch_strategy else ()
    if not patch_strategy and fld.list_type in ("", "atomic"):
        return None
    list_type = fld.list_type
    if not list_type:
        list_type = "map" if fld.merge_key else ("set" if "merge" in patch_strategy else "atomic")
    map_keys = fld.map_keys or ((fld.merge_key,) if fld.merge_key and list_type == "map" else ())
    return FieldStrategy(patch_strategy, fld.merge_key, list_type, map_keys)


def _walk(schemas: Schemas, struct: Struct, prefix: str, out: dict[str, FieldStrategy]) -> None:
    for fld in struct.fields:
        path = f"{prefix}.{fld.name}" if prefix else fld.name
        strategy = _REPLACED.get((struct.name, fld.name)) or _strategy(fld)
        if strategy is not None:
            out[path] = strategy
        t = fld.type
        if isinstance(t, Arr) and is_struct(t.item):
            _walk(schemas, schemas.get(t.item), item_path(path), out)  # type: ignore[arg-type]
        elif is_struct(t):
            _walk(schemas, schemas.get(t), path, out)  # type: ignore[arg-type]


@lru_cache(maxsize=256)
def _table(schemas: Schemas, group: str, version: str, kind: str) -> Mapping[str, FieldStrategy]:
    struct = schemas.kind_struct(group, version, kind) or schema.GENERIC
    out: dict[str, FieldStrategy] = {}
    _walk(schemas, struct, "", out)
    return MappingProxyType(out)


def schema_for(schemas: Schemas, rt: ResourceType) -> Mapping[str, FieldStrategy]:
    """The merge table of `rt`, read from its schema in `schemas` (the Kubernetes version
    served, `draplane.api.schema`); the ObjectMeta entries only for kinds without a schema."""
    return _table(schemas, rt.group, rt.version, rt.kind)


def strategy_at(schema: Mapping[str, FieldStrategy], path: str) -> FieldStrategy:
    """The strategy of the field at `path`; `ATOMIC` when the table does not list it."""
    return schema.get(path, ATOMIC)


def item_path(path: str) -> str:
    """The path of the items of the list at `path`."""
    return path + "[]"
