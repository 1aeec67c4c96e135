"""Server-side apply approximated over the `patch_schema` tables (no structured-merge-diff).

Approximations (all listed on `server_side_apply`): ownership is a path set per manager in
managedFields; only other Apply managers conflict, on leaf fields whose value differs; list-map
items keep their live order (new ones appended); nulls in the config are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from draplane.api import errors
from draplane.api.errors import StatusError
from draplane.api.kinds import ResourceType
from draplane.api.limits import check_object
from draplane.api.managed_fields import (
    IDENTITY_METADATA,
    SERVER_METADATA,
    Path,
    canonical_path,
    child_sp,
    collect,
    fields_to_paths,
    find_item,
    indexed_lists,
    item_key,
    lookup,
    note_appended,
    note_removed,
    path_string,
    paths_to_fields,
    quote,
    schema_path,
)
from draplane.api.meta import Obj, deep_copy
from draplane.api.patch import json_equal
from draplane.api.patch_schema import FieldStrategy, item_path, schema_for, strategy_at
from draplane.api.schema.model import Schemas
from draplane.api.strategic_merge import json_kind, scalar_id

__all__ = ["server_side_apply"]


def server_side_apply(
    live: Obj | None,
    applied: Obj,
    rt: ResourceType,
    schemas: Schemas,
    *,
    field_manager: str,
    force: bool,
    now: str,
    subresource: str = "",
) -> Obj:
    """Merge `applied` into `live` (None: the object to create) as manager `field_manager`.

    `schemas` are the Go types of the Kubernetes version served (the merge markers of `rt`).
    `subresource` is "" for the main resource or "status"; it scopes what is applied and
    tracked, and is recorded in the managedFields entry as the apiserver does.

    Approximations of structured-merge-diff:
    - ownership is the set of FieldsV1 paths in each managedFields entry; leaves, list-map
      items (`k:`) and set values (`v:`) are owned, parent maps are implied;
    - only other managers with operation Apply can conflict (Update entries are kept, and their
      fields protect against removal, but they never raise a conflict); a conflict is a leaf
      field both own whose applied value differs from the live one; `force` moves it over;
    - what this manager applied before and omits now is removed unless another entry owns it
      (or something under it); emptied parent maps are left in place;
    - list-map items keep their live order, new items are appended; set values are a union;
      atomic lists and scalars are replaced; nulls in the config are ignored;
    - a main-resource apply drops `status` for kinds with a status subresource, a status apply
      keeps only `status` (the apiserver's field reset strategies);
    - `metadata.resourceVersion` in the config is kept in the result so the caller can enforce
      it as a precondition; uid, generation, timestamps and managedFields are never applied.
    """
    _check_shape(applied, rt=rt)
    with indexed_lists():
        return _apply(
            live,
            applied,
            rt,
            schemas,
            field_manager=field_manager,
            force=force,
            now=now,
            subresource=subresource,
        )


def _apply(
    live: Obj | None,
    applied: Obj,
    rt: ResourceType,
    schemas: Schemas,
    *,
    field_manager: str,
    force: bool,
    now: str,
    subresource: str,
) -> Obj:
    schema = schema_for(schemas, rt)
    config = _scope(_strip(applied), rt=rt, subresource=subresource)
    new_paths = {canonical_path(p, live, schema=schema) for p in collect(config, schema=schema)}
    api_version = str(applied.get("apiVersion") or rt.api_version)
    entry = _entry(field_manager, api_version=api_version, now=now, paths=new_paths)
    if subresource:
        entry["subresource"] = subresource
    if live is None:
        created = deep_copy(config)
        created.setdefault("metadata", {})["managedFields"] = [entry] if new_paths else []
        check_object(created, "the applied object")
        return created
    entries = _entries(live)
    mine = next(
        (e for e in entries if _is_apply_by(e, field_manager, subresource=subresource)), None
    )
    others = [e for e in entries if e is not mine]
    owned = {id(e): _owned(e, live, schema=schema) for e in entries}
    conflicts = _conflicts(
        live, config, new_paths=new_paths, others=others, owned=owned, schema=schema
    )
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for manager_entry, path in conflicts:
        owned[id(manager_entry)].discard(path)
        manager_entry["fieldsV1"] = paths_to_fields(owned[id(manager_entry)])
    result = _merge_map(deep_copy(live), config, sp="", schema=schema)
    old_paths = owned[id(mine)] if mine else set()
    kept = set().union(*(owned[id(e)] for e in others))
    _remove_abandoned(result, old_paths - new_paths, kept=kept, schema=schema)
    result.setdefault("metadata", {})["managedFields"] = _managed_fields(
        entries, mine=mine, entry=entry if new_paths else None
    )
    check_object(result, "the applied object")
    return result


def _entries(live: Obj) -> list[Obj]:
    """A copy of the live object's managedFields entries (anything not an entry is dropped)."""
    stored = (live.get("metadata") or {}).get("managedFields")
    if not isinstance(stored, list):
        return []
    entries: list[Obj] = deep_copy({"m": [e for e in stored if isinstance(e, dict)]})["m"]
    return entries


def _owned(entry: Obj, live: Obj, *, schema: Mapping[str, FieldStrategy]) -> set[Path]:
    fields = entry.get("fieldsV1")
    paths = fields_to_paths(fields) if isinstance(fields, dict) else set()
    return {canonical_path(p, live, schema=schema) for p in paths}


def _remove_abandoned(
    obj: Obj, abandoned: set[Path], *, kept: set[Path], schema: Mapping[str, FieldStrategy]
) -> None:
    """Delete what this manager applied before and omits now, unless someone else owns it."""
    kept_prefixes = {p[:n] for p in kept for n in range(1, len(p) + 1)}
    for path in sorted(abandoned, key=len):
        if path not in kept_prefixes:
            _remove(obj, path, schema=schema)


def _managed_fields(entries: list[Obj], *, mine: Obj | None, entry: Obj | None) -> list[Obj]:
    """The entries with ours replaced in place (or appended); Apply entries left empty go."""
    updated: list[Obj] = []
    for current in entries:
        if current is mine:
            updated.extend([entry] if entry else [])
        elif current.get("fieldsV1") or not _is_apply(current):
            updated.append(current)
    if mine is None and entry:
        updated.append(entry)
    return updated


def _check_shape(applied: Any, *, rt: ResourceType) -> None:
    """The decode errors kube-apiserver reports for a config that is not an object."""
    if not isinstance(applied, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(applied)} into Go value of type "
            "map[string]interface {}"
        )
    metadata = applied.get("metadata", {})
    if not isinstance(metadata, dict | None):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(metadata)} into Go struct field "
            f"{rt.kind}.metadata of type v1.ObjectMeta"
        )


def _is_apply(entry: Obj) -> bool:
    return entry.get("operation") == "Apply"


def _is_apply_by(entry: Obj, manager: str, *, subresource: str) -> bool:
    return (
        entry.get("manager") == manager
        and entry.get("operation") == "Apply"
        and (entry.get("subresource") or "") == subresource
    )


def _entry(manager: str, *, api_version: str, now: str, paths: set[Path]) -> Obj:
    return {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": paths_to_fields(paths),
    }


def _strip(applied: Obj) -> Obj:
    """The applied config without nulls and without apiserver-owned metadata."""
    config: Obj = _drop_nulls(deep_copy(applied))
    metadata = config.get("metadata")
    if isinstance(metadata, dict):
        for key in SERVER_METADATA:
            metadata.pop(key, None)
    return config


def _scope(config: Obj, *, rt: ResourceType, subresource: str) -> Obj:
    """What a write to `subresource` may change (the apiserver's field reset strategies)."""
    if subresource == "status":
        metadata = config.get("metadata")
        scoped = {k: v for k, v in config.items() if k in ("apiVersion", "kind", "status")}
        if isinstance(metadata, dict):
            scoped["metadata"] = {k: v for k, v in metadata.items() if k in IDENTITY_METADATA}
        return scoped
    if "status" in rt.subresources:
        config.pop("status", None)
    return config


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


# --- conflicts ---------------------------------------------------------------------------------


def _conflicts(
    live: Obj,
    config: Obj,
    *,
    new_paths: set[Path],
    others: list[Obj],
    owned: dict[int, set[Path]],
    schema: Mapping[str, FieldStrategy],
) -> list[tuple[Obj, Path]]:
    """(other Apply manager's entry, path) for every applied leaf it owns with another value."""
    out: list[tuple[Obj, Path]] = []
    for other in others:
        if not _is_apply(other):
            continue
        for path in sorted(new_paths & owned[id(other)]):
            if not path[-1].startswith("f:"):
                continue
            found, current = lookup(live, path, schema=schema)
            _, wanted = lookup(config, path, schema=schema)
            if found and not json_equal(current, wanted):
                out.append((other, path))
    return out


def _conflict_error(conflicts: list[tuple[Obj, Path]]) -> StatusError:
    """409 as the apiserver's fieldmanager NewConflictError words it."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {quote(str(entry.get('manager')))}",
            "field": path_string(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = (
            f"Apply failed with 1 conflict: conflict with {quote(str(entry.get('manager')))}: "
            f"{path_string(path)}"
        )
    else:
        by_manager: dict[str, list[str]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(str(entry.get("manager")), []).append(path_string(path))
        lines: list[str] = []
        for manager in sorted(by_manager):
            lines.append(f"conflicts with {quote(manager)}:")
            lines.extend(f"- {p}" for p in by_manager[manager])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, {"causes": causes})


# --- merge and removal -------------------------------------------------------------------------


def _merge_map(live: Obj, config: Obj, *, sp: str, schema: Mapping[str, FieldStrategy]) -> Obj:
    for key, value in config.items():
        if sp == "metadata" and key in SERVER_METADATA:
            continue
        field_sp = child_sp(sp, key)
        current = live.get(key)
        strategy = strategy_at(schema, field_sp)
        if isinstance(value, dict) and isinstance(current, dict):
            live[key] = _merge_map(current, value, sp=field_sp, schema=schema)
        elif isinstance(value, list) and isinstance(current, list):
            live[key] = _merge_list(current, value, sp=field_sp, strategy=strategy, schema=schema)
        else:
            live[key] = deep_copy({"v": value})["v"]
    return live


def _merge_list(
    live: list[Any],
    config: list[Any],
    *,
    sp: str,
    strategy: FieldStrategy,
    schema: Mapping[str, FieldStrategy],
) -> list[Any]:
    if strategy.list_type == "set":
        present = {scalar_id(x) for x in live}
        added = []
        for value in config:
            if scalar_id(value) not in present:
                present.add(scalar_id(value))
                added.append(value)
        return live + added
    if strategy.list_type != "map" or not all(isinstance(v, dict) for v in (*live, *config)):
        return list(config)
    merged = list(live)
    for item in config:
        index = find_item(merged, item_key(item, strategy.map_keys)[2:], keys=strategy.map_keys)
        if index is None:
            merged.append(item)
            note_appended(merged, keys=strategy.map_keys)
        else:
            merged[index] = _merge_map(merged[index], item, sp=item_path(sp), schema=schema)
    return merged


def _remove(obj: Obj, path: Path, *, schema: Mapping[str, FieldStrategy]) -> None:
    """Delete the field, list-map item or set value at `path` (no-op when already gone)."""
    found, parent = lookup(obj, path[:-1], schema=schema)
    if not found:
        return
    kind, _, raw = path[-1].partition(":")
    if kind == "f" and isinstance(parent, dict):
        parent.pop(raw, None)
    elif kind == "k":
        sp = schema_path(path[:-1])
        keys = strategy_at(schema, sp).map_keys
        index = find_item(parent, raw, keys=keys)
        if index is not None:
            parent.pop(index)
            note_removed(parent, keys=keys)
    elif kind == "v" and isinstance(parent, list):
        wanted = orjson.loads(raw)
        parent[:] = [v for v in parent if not json_equal(v, wanted)]
