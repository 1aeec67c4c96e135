"""A candidate fix's changes: `Change` (a JSON merge patch, an object to create, a deletion),
applied to a `Snapshot` to check the fix and, by whoever takes the fix, through the API
(`apply_changes`; `draplane explain` itself never writes). A claim's spec is immutable, so a
changed claim is a deletion and a create of the same name (`replace_claim`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from draplane.api import meta
from draplane.api.kinds import RESOURCE_CLAIMS_V1, ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.api.patch import apply_merge_patch
from draplane.client.interface import Client
from draplane.explain.snapshot import Snapshot

Action = Literal["patch", "create", "delete"]


@dataclass(frozen=True)
class Change:
    action: Action
    resource: ResourceType
    name: str
    namespace: str = ""
    body: Obj | None = None
    """The merge patch (`patch`) or the object (`create`)."""

    def json(self) -> dict[str, Any]:
        rt = self.resource
        out: dict[str, Any] = {
            "action": self.action,
            "apiVersion": f"{rt.group}/{rt.version}" if rt.group else rt.version,
            "kind": rt.kind,
            "resource": rt.resource,
            "name": self.name,
        }
        if self.namespace:
            out["namespace"] = self.namespace
        if self.action == "patch":
            out["mergePatch"] = self.body
        elif self.action == "create":
            out["object"] = self.body
        return out

    def text(self) -> str:
        target = f"{self.resource.singular} {meta_key(self.namespace, self.name)}"
        if self.action == "delete":
            return f"delete {target}"
        if self.action == "patch":
            return f"patch {target} (merge patch): {_compact(self.body)}"
        return f"create {target}: {_compact(self.body)}"


def meta_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def creatable(obj: Obj) -> Obj:
    """`obj` as one creates it: identity metadata only, no status."""
    md = meta.metadata(obj)
    keep = {
        k: deep_copy(md[k]) for k in ("name", "namespace", "labels", "annotations") if md.get(k)
    }
    owners = md.get("ownerReferences")
    if owners:
        keep["ownerReferences"] = deep_copy(owners)
    out: Obj = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": keep}
    for k, v in obj.items():
        if k not in ("apiVersion", "kind", "metadata", "status"):
            out[k] = deep_copy(v)
    return out


def replace_claim(claim: Obj, spec: Obj) -> list[Change]:
    """Delete the claim and create it again with `spec` (a claim's spec is immutable)."""
    new = creatable(claim)
    new["spec"] = spec
    md = meta.metadata(claim)
    name, namespace = str(md.get("name")), str(md.get("namespace") or "")
    return [
        Change("delete", RESOURCE_CLAIMS_V1, name, namespace),
        Change("create", RESOURCE_CLAIMS_V1, name, namespace, new),
    ]


def apply_to_snapshot(snapshot: Snapshot, changes: list[Change]) -> Snapshot:
    out = snapshot
    for change in changes:
        key = (change.namespace, change.name)
        if change.action == "delete":
            out = out.changed(remove=[(change.resource, key)])
            continue
        assert change.body is not None
        if change.action == "create":
            obj = deep_copy(change.body)
            obj["metadata"].setdefault("uid", f"explain-{change.namespace}-{change.name}")
            out = out.changed(put=[(change.resource, obj)])
            continue
        current = out.get(change.resource, change.name, change.namespace)
        if current is not None:
            out = out.changed(put=[(change.resource, apply_merge_patch(current, change.body))])
    return out


async def apply_changes(client: Client, changes: list[Change]) -> None:
    """Apply a fix's changes through the API, in order (a deleted pod goes at once)."""
    for change in changes:
        rt, name, ns = change.resource, change.name, change.namespace
        if change.action == "delete":
            await client.delete(rt, name, ns, grace_period_seconds=0)
        elif change.action == "create":
            assert change.body is not None
            await client.create(rt, deep_copy(change.body), ns)
        else:
            await client.patch(rt, name, change.body, ns)
