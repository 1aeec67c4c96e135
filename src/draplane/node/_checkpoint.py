"""`Checkpoint`: the claims a node prepared through kubelet plugins, kept in its kubelet
directory (`dra_manager_state`, as kubelet's DRA manager checkpoints its claim info cache), so
a restarted node neither prepares a claim twice nor forgets to unprepare it.

Per claim UID: its name and namespace, the UIDs of the pods on this node that use it, and per
driver the devices NodePrepareResources returned. The file is rewritten atomically after
every change.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger(__name__)

FILE_NAME = "dra_manager_state"
VERSION = "draplane.dev/v1"


@dataclass(frozen=True)
class Device:
    """One device of a prepared claim, as the plugin returned it."""

    request_names: tuple[str, ...]
    pool_name: str
    device_name: str
    cdi_device_ids: tuple[str, ...]


@dataclass
class ClaimInfo:
    uid: str
    name: str
    namespace: str
    pods: set[str] = field(default_factory=set)
    drivers: dict[str, tuple[Device, ...]] = field(default_factory=dict)
    """Driver name -> the devices it prepared (a driver without an entry has not)."""

    @property
    def cdi_device_ids(self) -> list[str]:
        return [i for devices in self.drivers.values() for d in devices for i in d.cdi_device_ids]


class Checkpoint:
    """The prepared claims of one node, by claim UID, backed by a file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.claims: dict[str, ClaimInfo] = _load(path)

    def save(self) -> None:
        data = {"version": VERSION, "claims": [_dump(c) for c in self.claims.values()]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
        os.replace(tmp, self.path)

    def claim(self, *, uid: str, name: str, namespace: str) -> ClaimInfo:
        """The claim's entry, created when missing."""
        info = self.claims.get(uid)
        if info is None:
            info = self.claims[uid] = ClaimInfo(uid, name, namespace)
        return info


def _dump(info: ClaimInfo) -> dict[str, Any]:
    return {
        "uid": info.uid,
        "name": info.name,
        "namespace": info.namespace,
        "pods": sorted(info.pods),
        "drivers": {
            driver: [
                {
                    "requestNames": list(d.request_names),
                    "poolName": d.pool_name,
                    "deviceName": d.device_name,
                    "cdiDeviceIDs": list(d.cdi_device_ids),
                }
                for d in devices
            ]
            for driver, devices in info.drivers.items()
        },
    }


def _load(path: Path) -> dict[str, ClaimInfo]:
    """The checkpoint's claims; a missing file is empty, a broken one is logged and ignored
    (kubelet refuses to start on a corrupt checkpoint; a simulated node starts afresh)."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, orjson.JSONDecodeError) as err:
        log.warning("DRA checkpoint %s cannot be read, starting empty: %s", path, err)
        return {}
    claims: dict[str, ClaimInfo] = {}
    try:
        for entry in data["claims"]:
            info = ClaimInfo(
                str(entry["uid"]),
                str(entry["name"]),
                str(entry["namespace"]),
                pods={str(p) for p in entry.get("pods") or []},
                drivers={
                    str(driver): tuple(
                        Device(
                            tuple(d.get("requestNames") or ()),
                            str(d.get("poolName") or ""),
                            str(d.get("deviceName") or ""),
                            tuple(d.get("cdiDeviceIDs") or ()),
                        )
                        for d in devices
                    )
                    for driver, devices in (entry.get("drivers") or {}).items()
                },
            )
            claims[info.uid] = info
    except (KeyError, TypeError, AttributeError) as err:
        log.warning("DRA checkpoint %s is malformed, starting empty: %s", path, err)
        return {}
    return claims
