"""Finding and loading fleet files: the ones shipped as package data (`shipped_fleets`, under
`draplane/fleets/data/<name>.yaml`) or a user's file (`load_fleet` takes a name or a path).

A fleet is checked when it is loaded: its fields (`_model`), then every node type's slices for
one node and every DeviceClass through the API server's own validation, so a bad file is a
`FleetError` naming the field at start-up, not a 422 from a node half-way through.
"""

from __future__ import annotations

import dataclasses
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from draplane.api import errors
from draplane.api.meta import Obj
from draplane.api.validation.deviceslice import validate_device_class, validate_resource_slice
from draplane.fleets._model import Fleet, FleetError, parse_fleet
from draplane.fleets._slices import node_slice_specs
from draplane.fleets._templates import TemplateError

_DATA = "data"
_SUFFIX = ".yaml"


def shipped_fleets() -> list[str]:
    """The names of the fleets shipped with draplane, sorted."""
    folder = resources.files("draplane.fleets").joinpath(_DATA)
    return sorted(
        entry.name.removesuffix(_SUFFIX)
        for entry in folder.iterdir()
        if entry.name.endswith(_SUFFIX)
    )


def load_fleet(name_or_path: str) -> Fleet:
    """The shipped fleet of that name, or the fleet file at that path (anything with a `/` or
    ending in .yaml/.yml is a path)."""
    return _load(name_or_path, ())


def _load(name_or_path: str, loading: tuple[str, ...]) -> Fleet:
    if name_or_path in loading:
        chain = " -> ".join((*loading, name_or_path))
        raise FleetError(f"fleet profiles refer to each other in a cycle: {chain}")
    source, text = _read(name_or_path)
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise FleetError(f"{source}: not YAML: {err}") from None
    name = Path(name_or_path).stem if _is_path(name_or_path) else name_or_path
    fleet = parse_fleet(
        value,
        source=source,
        name=name,
        resolve=lambda other: _load(other, (*loading, name_or_path)),
    )
    _check(fleet, source)
    reference = str(Path(name_or_path).resolve()) if _is_path(name_or_path) else name_or_path
    return dataclasses.replace(fleet, reference=reference)


def _is_path(name_or_path: str) -> bool:
    return "/" in name_or_path or name_or_path.endswith((".yaml", ".yml"))


def _read(name_or_path: str) -> tuple[str, str]:
    if _is_path(name_or_path):
        try:
            return name_or_path, Path(name_or_path).read_text(encoding="utf-8")
        except OSError as err:
            raise FleetError(f"cannot read fleet file {name_or_path}: {err.strerror}") from None
    shipped = shipped_fleets()
    if name_or_path not in shipped:
        raise FleetError(
            f"no fleet profile {name_or_path!r} (shipped: {', '.join(shipped)}; "
            "or give a path to a fleet file)"
        )
    entry = resources.files("draplane.fleets").joinpath(_DATA, name_or_path + _SUFFIX)
    return f"fleet {name_or_path}", entry.read_text(encoding="utf-8")


def _check(fleet: Fleet, source: str) -> None:
    """Every class and one node's slices of every node type, as the API server validates them."""
    for device_class in fleet.device_classes:
        _raise_invalid(source, "DeviceClass", validate_device_class(device_class))
    for node_type in fleet.node_types:
        for driver in node_type.drivers:
            try:
                specs = node_slice_specs(node_type, driver, "node-0")
            except (FleetError, TemplateError, ValueError) as err:
                raise FleetError(f"{source}: node type {node_type.name}: {err}") from None
            for i, spec in enumerate(specs):
                pooled: dict[str, Any] = {
                    **spec,
                    "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": len(specs)},
                }
                slice_: Obj = {"metadata": {"name": f"node-0-{i}"}, "spec": pooled}
                what = f"node type {node_type.name}: {driver} ResourceSlice {i}"
                _raise_invalid(source, what, validate_resource_slice(slice_))


def _raise_invalid(source: str, what: str, found: list[errors.FieldError]) -> None:
    if found:
        causes = "; ".join(f"{e.field}: {e.message()}" for e in found[:5])
        raise FleetError(f"{source}: {what} is invalid: {causes}")
