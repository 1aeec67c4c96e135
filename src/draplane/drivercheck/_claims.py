"""The claims the harness prepares: ResourceClaims it creates in its namespace and allocates
itself (as the scheduler would, from the devices of the node's slices), each reserved for a pod
bound to the node, so the plugin reads real allocated claims from the API with the node's
identity; `cleanup` deletes pods and claims. A running node prepares those pods' claims too,
which a plugin that is idempotent per claim UID takes in its stride."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.drivercheck._plugin import ClaimRef


@dataclass(frozen=True)
class SliceDevice:
    pool: str
    device: str


@dataclass
class ClaimMaker:
    client: Client
    """Allowed to create namespaces and claims and write claim status (an admin)."""
    driver: str
    node: str
    namespace: str
    parameters: dict[str, Any]
    """The opaque config given to claims with configs."""
    created: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)

    async def ensure_namespace(self) -> None:
        try:
            await self.client.create(
                kinds.NAMESPACES,
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}},
            )
        except errors.StatusError as err:
            if not errors.is_already_exists(err):
                raise

    async def claim(self, devices: list[SliceDevice], *, configs: bool = False) -> Obj:
        """A claim with one request per device (`req-<i>`), allocated those devices, with an
        opaque config of the driver per request when `configs`."""
        requests = [f"req-{i}" for i in range(len(devices))]
        claim: Obj = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"generateName": "driver-check-", "namespace": self.namespace},
            "spec": {
                "devices": {
                    "requests": [
                        {"name": r, "exactly": {"deviceClassName": "driver-check"}}
                        for r in requests
                    ]
                }
            },
        }
        created = meta.deep_copy(await self.client.create(kinds.RESOURCE_CLAIMS_V1, claim))
        self.created.append(created)
        pod = await self._pod(meta.name(created))
        allocation: Obj = {
            "devices": {
                "results": [
                    {"request": r, "driver": self.driver, "pool": d.pool, "device": d.device}
                    for r, d in zip(requests, devices, strict=True)
                ],
                "config": [
                    {
                        "source": "FromClaim",
                        "requests": [r],
                        "opaque": {"driver": self.driver, "parameters": self.parameters},
                    }
                    for r in requests
                ]
                if configs
                else [],
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [self.node]}
                        ]
                    }
                ]
            },
        }
        created["status"] = {
            "allocation": allocation,
            "reservedFor": [{"resource": "pods", "name": meta.name(pod), "uid": meta.uid(pod)}],
        }
        return await self.client.update(kinds.RESOURCE_CLAIMS_V1, created, subresource="status")

    async def _pod(self, claim_name: str) -> Obj:
        """The pod on the node that uses the claim: what lets the node's identity read it
        (the node authorizer follows pods to their claims), as a real pod would."""
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "driver-check-", "namespace": self.namespace},
            "spec": {
                "nodeName": self.node,
                "containers": [
                    {
                        "name": "ctr",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": "claim"}]},
                    }
                ],
                "resourceClaims": [{"name": "claim", "resourceClaimName": claim_name}],
            },
        }
        created = await self.client.create(kinds.PODS, pod)
        self.pods.append(created)
        return created

    async def cleanup(self) -> None:
        for pod in self.pods:
            try:
                await self.client.delete(
                    kinds.PODS, meta.name(pod), meta.namespace(pod), grace_period_seconds=0
                )
            except errors.StatusError as err:
                if not errors.is_not_found(err):
                    raise
        self.pods.clear()
        for claim in self.created:
            try:
                await self.client.delete(
                    kinds.RESOURCE_CLAIMS_V1, meta.name(claim), meta.namespace(claim)
                )
            except errors.StatusError as err:
                if not errors.is_not_found(err):
                    raise
        self.created.clear()


def ref(claim: Obj) -> ClaimRef:
    return ClaimRef(meta.namespace(claim), meta.name(claim), meta.uid(claim))


def unknown_ref(namespace: str) -> ClaimRef:
    """A claim no API server has: a fresh UID under a name that does not exist."""
    uid = str(uuid.uuid4())
    return ClaimRef(namespace, f"driver-check-unknown-{uid[:8]}", uid)
