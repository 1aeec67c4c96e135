"""Legacy discovery documents (/version, /api, /apis, /api/v1, /apis/<g>, /apis/<g>/<v>).

Built from the API server's catalog (`draplane.api.catalog`: the built-in kinds and the
custom resources of established CRDs). Always plain application/json: every kubectl version
falls back to legacy discovery when the response is not an aggregated discovery document.
"""

from __future__ import annotations

import platform
from typing import Any

from draplane.api import kinds, versions
from draplane.api.catalog import Catalog
from draplane.api.kinds import ResourceType

# Verbs of each subresource, as kube-apiserver advertises them.
_SUBRESOURCE_VERBS: dict[str, tuple[str, ...]] = {
    "status": ("get", "patch", "update"),
    "binding": ("create",),
    "finalize": ("update",),
    "token": ("create",),
    "scale": ("get", "patch", "update"),
}


def version_info(mode: versions.Mode) -> dict[str, str]:
    major, minor = mode.git_version.lstrip("v").split(".")[:2]
    return {
        "major": major,
        "minor": minor,
        "gitVersion": mode.git_version,
        "gitCommit": "draplane",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "python" + platform.python_version(),
        "compiler": "cpython",
        "platform": f"{platform.system().lower()}/{platform.machine().lower()}",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def _versions(catalog: Catalog | None) -> dict[str, list[str]]:
    return catalog.group_versions() if catalog is not None else kinds.group_versions()


def api_group_list(catalog: Catalog | None = None) -> dict[str, Any]:
    groups = [_group(g, v) for g, v in _versions(catalog).items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(name: str, catalog: Catalog | None = None) -> dict[str, Any] | None:
    versions = _versions(catalog).get(name)
    if not name or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def _resource_entries(rt: ResourceType) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": rt.resource,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(rt.verbs),
    }
    if rt.short_names:
        main["shortNames"] = list(rt.short_names)
    if rt.categories:
        main["categories"] = list(rt.categories)
    entries = [main]
    for sub in rt.subresources:
        entry: dict[str, Any] = {
            "name": f"{rt.resource}/{sub}",
            "singularName": "",
            "namespaced": rt.namespaced,
            "kind": kinds.SUBRESOURCE_KINDS[sub][2] if sub in kinds.SUBRESOURCE_KINDS else rt.kind,
            "verbs": list(_SUBRESOURCE_VERBS.get(sub, ("get",))),
        }
        if sub in kinds.SUBRESOURCE_KINDS:
            entry["group"], entry["version"], _ = kinds.SUBRESOURCE_KINDS[sub]
        entries.append(entry)
    return entries


def api_resource_list(
    group: str, version: str, catalog: Catalog | None = None
) -> dict[str, Any] | None:
    every = catalog.served() if catalog is not None else kinds.SERVED
    served = [rt for rt in every if rt.group == group and rt.version == version]
    if not served:
        return None
    resources = [entry for rt in served for entry in _resource_entries(rt)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": served[0].api_version,
        "resources": resources,
    }
