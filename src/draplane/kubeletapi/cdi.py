"""Container Device Interface spec files, as a driver writes them and a container runtime reads
them: `cdiVersion`, `kind` (`vendor.com/class`), `devices[]` (`name`, `containerEdits`) and the
spec's own `containerEdits`, applied with any of its devices. A CDI device ID is
`<kind>=<name>`. Only the `env` edits have an effect on a simulated container; the others
(`deviceNodes`, `mounts`, `hooks`) are kept in the spec and otherwise ignored.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

CDI_VERSION = "0.8.0"
SPEC_SUFFIXES = (".json", ".yaml", ".yml")
_KIND = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[a-zA-Z0-9]([-_.a-zA-Z0-9]*[a-zA-Z0-9])?$")
_NAME = re.compile(r"^[a-zA-Z0-9]([-_.:a-zA-Z0-9]*[a-zA-Z0-9])?$")


class CDIError(Exception):
    """A device ID that no spec defines, or a spec that cannot be read."""


@dataclass(frozen=True)
class DeviceEdits:
    """What a CDI device adds to a container (its spec's edits, then its own)."""

    env: tuple[str, ...] = ()


@dataclass
class Registry:
    """The devices of the specs of one directory, by CDI device ID."""

    devices: dict[str, DeviceEdits] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def resolve(self, device_ids: list[str]) -> dict[str, str]:
        """The environment the devices inject, in order (a later device's value wins);
        `CDIError` names the IDs no spec defines."""
        missing = [i for i in device_ids if i not in self.devices]
        if missing:
            raise CDIError(f"unresolvable CDI devices {', '.join(missing)}")
        env: dict[str, str] = {}
        for device_id in device_ids:
            for entry in self.devices[device_id].env:
                key, _, value = entry.partition("=")
                env[key] = value
        return env


def device_id(kind: str, name: str) -> str:
    """The qualified CDI device ID `<vendor>/<class>=<name>`."""
    return f"{kind}={name}"


def spec(kind: str, devices: dict[str, dict[str, str]]) -> dict[str, Any]:
    """A spec of `kind` with one device per name, each injecting its env."""
    return {
        "cdiVersion": CDI_VERSION,
        "kind": kind,
        "devices": [
            {
                "name": name,
                "containerEdits": {"env": [f"{k}={v}" for k, v in env.items()]},
            }
            for name, env in devices.items()
        ],
    }


def write_spec(directory: Path, file_name: str, content: dict[str, Any]) -> Path:
    """Write a spec atomically (a runtime never reads half a file)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name
    tmp = directory / f".{file_name}.tmp"
    tmp.write_bytes(orjson.dumps(content, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)
    return path


def load(directory: Path) -> Registry:
    """Every spec in the directory (JSON or YAML); broken files are listed in `errors`."""
    registry = Registry()
    if not directory.is_dir():
        return registry
    for path in sorted(directory.iterdir()):
        if path.suffix not in SPEC_SUFFIXES or path.name.startswith("."):
            continue
        try:
            _add(registry, _read(path))
        except (OSError, ValueError, CDIError, yaml.YAMLError) as err:
            registry.errors.append(f"{path.name}: {err}")
    return registry


def _read(path: Path) -> Any:
    text = path.read_bytes()
    if path.suffix == ".json":
        return orjson.loads(text)
    return yaml.safe_load(text)


def _add(registry: Registry, content: Any) -> None:
    if not isinstance(content, dict):
        raise CDIError("a CDI spec is an object")
    kind = content.get("kind")
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise CDIError(f"invalid kind {kind!r}")
    common = _env(content.get("containerEdits"))
    devices = content.get("devices")
    if not isinstance(devices, list):
        raise CDIError("devices must be a list")
    for device in devices:
        name = device.get("name") if isinstance(device, dict) else None
        if not isinstance(name, str) or not _NAME.match(name):
            raise CDIError(f"invalid device name {name!r}")
        edits = DeviceEdits(env=common + _env(device.get("containerEdits")))
        registry.devices[device_id(kind, name)] = edits


def _env(edits: Any) -> tuple[str, ...]:
    if edits is None:
        return ()
    if not isinstance(edits, dict):
        raise CDIError("containerEdits must be an object")
    env = edits.get("env") or []
    if not isinstance(env, list) or not all(isinstance(e, str) and "=" in e for e in env):
        raise CDIError('containerEdits.env must be a list of "KEY=VALUE" strings')
    return tuple(env)
