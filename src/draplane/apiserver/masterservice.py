"""The `kubernetes` Service in `default` (pkg/controlplane/controller/kubernetesservice): port
443 (`https`) to the API server's own address and port, with its Endpoints and EndpointSlice,
written at every start so a new port is picked up. Its cluster IP is the service CIDR's first.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from draplane.api import errors, kinds, meta
from draplane.api.auth import UserInfo
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver.storageerrors import to_status
from draplane.apiserver.strategies.merge import merge_for_write
from draplane.apiserver.strategies.table import strategy_for
from draplane.storage.errors import StorageError

if TYPE_CHECKING:
    from draplane.apiserver.registry import Registry

NAME, NAMESPACE = "kubernetes", "default"
_ATTEMPTS = 10
_RETRY_SECONDS = 0.05
_SELF = UserInfo("system:apiserver", "", ("system:masters",))


def _service(cluster_ip: str, port: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
            "sessionAffinity": "None",
        },
    }


def _endpoints(host: str, port: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [
            {
                "addresses": [{"ip": host}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            }
        ],
    }


def _endpoint_slice(host: str, port: int) -> Obj:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"kubernetes.io/service-name": NAME},
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": [host], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }


async def _put(registry: Registry, rt: ResourceType, obj: Obj, same: bool) -> None:
    strategy = strategy_for(rt)
    old = await registry.storage.get(rt.key, NAMESPACE, NAME)
    if old is None:
        await registry.writer.create_object(_SELF, strategy, NAMESPACE, obj, dry_run=False)
    elif not same:
        new = meta.deep_copy(old)
        for key in ("spec", "subsets", "endpoints", "ports", "addressType"):
            if key in obj:
                new[key] = obj[key]
        new["metadata"]["labels"] = {**meta.labels(old), **meta.labels(obj)}
        merged = merge_for_write(
            strategy, "", new, old, NAMESPACE, NAME, schemas=registry.kinds.schemas
        )
        await registry.writer.store_update(_SELF, strategy, "", merged, old)


async def ensure_kubernetes_service(registry: Registry, host: str, port: int) -> None:
    """Create or update the `kubernetes` Service, Endpoints and EndpointSlice. A replica on the
    same store writing them at the same moment (409 or 404) makes it read and write again; the
    last replica to start names itself (no lease-based endpoint reconciler)."""
    for attempt in range(_ATTEMPTS):
        try:
            await _ensure(registry, host, port)
            return
        except (StorageError, errors.StatusError) as err:
            code = to_status(err).code if isinstance(err, StorageError) else err.code
            if code not in (404, 409) or attempt == _ATTEMPTS - 1:
                raise
            await asyncio.sleep(_RETRY_SECONDS * (attempt + 1))


async def _ensure(registry: Registry, host: str, port: int) -> None:
    service = _service(registry.service_ips.kubernetes_ip, port)
    old = await registry.storage.get(kinds.SERVICES.key, NAMESPACE, NAME)
    old_port = ((old or {}).get("spec") or {}).get("ports") or [{}]
    await _put(registry, kinds.SERVICES, service, old_port[0].get("targetPort") == port)
    await _put(registry, kinds.ENDPOINTS, _endpoints(host, port), False)
    await _put(registry, kinds.ENDPOINT_SLICES, _endpoint_slice(host, port), False)
