"""`apply_manifests`: create every object of a YAML manifest file through a client, as
`kubectl create -f` does (a namespaced object without a namespace goes to `default`)."""

from __future__ import annotations

from pathlib import Path

import yaml

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client


async def apply_manifests(client: Client, path: Path, namespace: str = "default") -> list[Obj]:
    """The created objects, in file order; `namespace` for those that name none."""
    created = []
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc:
            continue
        rt = kinds.for_kind(str(doc["apiVersion"]), str(doc["kind"]))
        if rt is None:
            raise ValueError(f"{path}: no served kind {doc['apiVersion']} {doc['kind']}")
        ns = (meta.namespace(doc) or namespace) if rt.namespaced else ""
        created.append(await client.create(rt, doc, ns))
    return created
