"""The DRA-relevant state of a cluster as `draplane dump` writes it and `draplane whatif` forks
it: the kinds (`STATE_KINDS`), reading them once through the API (read-only), and the dump file
(JSON lines, one object a line with `apiVersion` and `kind`; YAML documents when the file name
ends `.yaml`/`.yml`). The state is an `explain.Snapshot` over all of these kinds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from draplane.api import errors, meta
from draplane.api.kinds import (
    DAEMON_SETS,
    DEPLOYMENTS,
    DEVICE_CLASSES,
    DEVICE_TAINT_RULES,
    JOBS,
    NAMESPACES,
    NODES,
    PODS,
    PRIORITY_CLASSES,
    REPLICA_SETS,
    RESOURCE_CLAIM_TEMPLATES_V1,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
    SERVICE_ACCOUNTS,
    STATEFUL_SETS,
    ResourceType,
)
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.explain import Snapshot

STATE_KINDS: tuple[ResourceType, ...] = (
    NAMESPACES,
    SERVICE_ACCOUNTS,
    PRIORITY_CLASSES,
    NODES,
    DEVICE_CLASSES,
    DEVICE_TAINT_RULES,
    RESOURCE_SLICES,
    RESOURCE_CLAIM_TEMPLATES_V1,
    DEPLOYMENTS,
    STATEFUL_SETS,
    DAEMON_SETS,
    JOBS,
    REPLICA_SETS,
    PODS,
    RESOURCE_CLAIMS_V1,
)
"""In creation order: namespaces first, then what pod admission looks up (ServiceAccounts,
PriorityClasses), each owner before what it owns (Deployment before its ReplicaSets before
their Pods before the Pods' ResourceClaims)."""
SERVER_CREATED: tuple[ResourceType, ...] = (NAMESPACES, SERVICE_ACCOUNTS, PRIORITY_CLASSES)
"""Kinds a fresh control plane creates some objects of itself (`default`, `kube-system`, the
`default` ServiceAccounts, the system PriorityClasses): an existing one is kept."""

OPTIONAL_KINDS: tuple[ResourceType, ...] = (DEVICE_TAINT_RULES,)
"""Kinds behind a feature gate upstream (DRADeviceTaints): not served is the same as none."""
_DROPPED_METADATA = ("managedFields",)


class StateError(Exception):
    """A dump or manifest file that cannot be read (one line of text)."""


def api_version(rt: ResourceType) -> str:
    return f"{rt.group}/{rt.version}" if rt.group else rt.version


def kind_for(obj: Obj) -> ResourceType:
    """The state kind of a manifest object, by `apiVersion` and `kind` (resource.k8s.io objects
    in v1, DeviceTaintRules in v1beta2)."""
    kind, version = str(obj.get("kind") or "?"), str(obj.get("apiVersion") or "?")
    for rt in STATE_KINDS:
        if rt.kind == kind and api_version(rt) == version:
            return rt
    raise StateError(f"{version} {kind} is not DRA state draplane reads")


def empty_state() -> Snapshot:
    return Snapshot.of({rt: () for rt in STATE_KINDS})


def compact(obj: Obj, rt: ResourceType) -> Obj:
    """`obj` with `apiVersion`/`kind` set and managedFields dropped (a shallow copy)."""
    out = {**obj, "apiVersion": api_version(rt), "kind": rt.kind}
    md = dict(meta.metadata(obj))
    for key in _DROPPED_METADATA:
        md.pop(key, None)
    out["metadata"] = md
    return out


async def read_state(client: Client) -> Snapshot:
    """List every state kind once (read-only); an `OPTIONAL_KINDS` kind the server does not
    serve is empty, any other raises (a cluster without resource.k8s.io/v1 is not read as one
    without claims)."""
    objects: dict[ResourceType, list[Obj]] = {}
    for rt in STATE_KINDS:
        try:
            listed = await client.list(rt)
        except errors.StatusError as err:
            if rt in OPTIONAL_KINDS and err.code == 404:
                objects[rt] = []
                continue
            raise
        objects[rt] = [compact(item, rt) for item in listed.get("items") or ()]
    return Snapshot.of(objects)


def state_objects(state: Snapshot) -> Iterator[tuple[ResourceType, Obj]]:
    """Every object in `STATE_KINDS` order, sorted by (namespace, name) within a kind."""
    for rt in STATE_KINDS:
        objs = state.objects.get(rt) or {}
        for key in sorted(objs):
            yield rt, objs[key]


def state_of(objects: Iterable[Obj]) -> Snapshot:
    """A state from manifest-style objects (each with apiVersion and kind)."""
    grouped: dict[ResourceType, list[Obj]] = {rt: [] for rt in STATE_KINDS}
    for obj in objects:
        rt = kind_for(obj)
        grouped[rt].append(compact(obj, rt))
    return Snapshot.of(grouped)


def write_dump(path: Path, state: Snapshot) -> int:
    """Write `state` to `path`; the number of objects written."""
    objs = [obj for _, obj in state_objects(state)]
    if path.suffix in (".yaml", ".yml"):
        path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    else:
        with path.open("w") as f:
            for obj in objs:
                f.write(json.dumps(obj, separators=(",", ":")) + "\n")
    return len(objs)


def load_objects(path: Path) -> list[Obj]:
    """The objects of a JSON-lines or YAML file (a `List`'s items are unwrapped)."""
    try:
        text = path.read_text()
    except OSError as err:
        raise StateError(f"cannot read {path}: {err.strerror or err}") from err
    try:
        docs: list[Any]
        if path.suffix in (".yaml", ".yml"):
            docs = list(yaml.safe_load_all(text))
        else:
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (yaml.YAMLError, json.JSONDecodeError) as err:
        raise StateError(f"cannot parse {path}: {str(err).splitlines()[0]}") from err
    out: list[Obj] = []
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise StateError(f"{path}: every document must be an object")
        if str(doc.get("kind") or "").endswith("List") and isinstance(doc.get("items"), list):
            out.extend(doc["items"])
        else:
            out.append(doc)
    return out


def read_dump(path: Path) -> Snapshot:
    return state_of(load_objects(path))
