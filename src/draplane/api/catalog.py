"""The kinds one API server serves: the built-in kinds of `draplane.api.kinds` and the custom
resources of its established CustomResourceDefinitions.

One `Catalog` per API server; the request router, discovery, authorization, the watch cache and
the strategies all look kinds up here, so a CRD that becomes Established is served everywhere at
once and a deleted one nowhere.
"""

from __future__ import annotations

import re

from draplane.api import crd, kinds, schema, versions
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key of Kubernetes version priority: GA before beta before alpha, higher first, then
    other names alphabetically (apimachinery's CompareKubeAwareVersionStrings)."""
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (3, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), "")


class Catalog:
    def __init__(self, mode: versions.Mode) -> None:
        self.mode = mode
        """The Kubernetes version served: its built-in kinds (`draplane.api.versions`) and Go
        types (`schemas`)."""
        builtin = mode.served
        self._builtin = builtin
        self._builtin_gvr = {(r.group, r.version, r.resource): r for r in builtin}
        self._builtin_kind = {(r.api_version, r.kind): r for r in builtin}
        self._builtin_key: dict[str, ResourceType] = {}
        for r in builtin:
            self._builtin_key.setdefault(r.key, r)
        self._builtin_stored = tuple(r for r in builtin if "list" in r.verbs)
        self._crds: dict[str, tuple[ResourceType, ...]] = {}
        """CRD name -> the served versions' types (established CRDs only)."""
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}

    @property
    def schemas(self) -> schema.Schemas:
        """The Go types of the served version (`draplane.api.schema`), as registered now."""
        return schema.schemas_for(self.mode.name)

    def observe_crd(self, obj: Obj, *, deleted: bool = False) -> None:
        """Serve `obj`'s versions when it is Established, stop serving them otherwise."""
        name = str((obj.get("metadata") or {}).get("name", ""))
        types = () if deleted or not crd.is_established(obj) else tuple(crd.resource_types(obj))
        if types:
            self._crds[name] = types
        else:
            self._crds.pop(name, None)
        self._by_gvr = {(r.group, r.version, r.resource): r for r in self.custom()}
        self._by_kind = {(r.api_version, r.kind): r for r in self.custom()}

    def custom(self) -> list[ResourceType]:
        """The served custom resource types, CRD by CRD."""
        return [rt for types in self._crds.values() for rt in types]

    def served(self) -> list[ResourceType]:
        """Every served kind, built-in kinds first, in discovery order."""
        return [*self._builtin, *self.custom()]

    def stored(self) -> list[ResourceType]:
        # One type per storage key: a kind's other versions share its storage.
        return [*(r for r in self._builtin_stored if self._builtin_key[r.key] is r), *self.custom()]

    def lookup(self, group: str, version: str, resource: str) -> ResourceType | None:
        return self._builtin_gvr.get((group, version, resource)) or self._by_gvr.get(
            (group, version, resource)
        )

    def for_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self._builtin_kind.get((api_version, kind)) or self._by_kind.get((api_version, kind))

    def for_key(self, key: str) -> ResourceType | None:
        found = self._builtin_key.get(key)
        if found is not None:
            return found
        return next((r for r in self.custom() if r.key == key), None)

    def group_versions(self) -> dict[str, list[str]]:
        """Group name -> served versions ("" is the core group), custom groups last, their
        versions in Kubernetes version priority (the first is the preferred version)."""
        out = kinds.group_versions(self._builtin)
        custom: dict[str, list[str]] = {}
        for rt in self.custom():
            versions = custom.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        for group, versions in custom.items():
            merged = out.setdefault(group, [])
            merged.extend(v for v in sorted(versions, key=version_priority) if v not in merged)
        return out

    def crd_types(self, name: str) -> tuple[ResourceType, ...]:
        return self._crds.get(name, ())
