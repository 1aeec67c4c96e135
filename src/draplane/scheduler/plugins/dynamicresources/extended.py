"""Extended resources backed by DRA in the structured DynamicResources plugin (spec 4.9,
DRAExtendedResource, beta and on in 1.36).

A container's `resources.requests[<name>]` of a resource a DeviceClass serves
(`dra.extended`) is allocated by DRA on a node whose `status.allocatable` lacks it (a node that
has it serves it through its device plugin). PreFilter collects those requests; Filter builds
the node's in-memory claim (`<extended-resources>`, one ExactCount request per container and
resource) and allocates it together with the pod's claims; Reserve makes its allocation an
in-flight one; PreBind creates the real claim (generateName `<pod>-extended-resources-`,
annotation `resource.kubernetes.io/extended-resource-claim: "true"`, the pod as controller
owner), writes its allocation and `reservedFor`, and records it in
`pod.status.extendedResourceClaimStatus`; Unreserve deletes what PreBind created.

A claim recorded in the pod's status by an earlier cycle is used like one of the pod's claims.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj, deep_copy
from draplane.api.types import Pod, ResourceClaim, ResourceClaimSpec
from draplane.client.interface import Client
from draplane.dra import extended
from draplane.dra.extended import ExtendedRequest
from draplane.dra.resourcev1 import DELETE_PROTECTION_FINALIZER, RESOURCE_CLAIMS_V1
from draplane.scheduler.framework import Lister, NodeInfo, PodInfo
from draplane.scheduler.plugins.dynamicresources.assume import ClaimTracker
from draplane.scheduler.plugins.dynamicresources.claims import ClaimLookupError, PodClaim

log = logging.getLogger(__name__)

GENERATE_NAME_SUFFIX = "-extended-resources-"
_NAME_MAX = 253 - 5  # room for the random suffix


@dataclass
class ExtendedState:
    """The pod's DRA-backed extended resources in one scheduling cycle."""

    requests: list[ExtendedRequest]
    claims: dict[frozenset[str], NodeClaim] = field(default_factory=dict)
    """The in-memory claim per set of resources a node lacks (nodes share them)."""
    node_claims: dict[str, NodeClaim] = field(default_factory=dict)
    """Node name -> the in-memory claim allocated there (Filter)."""
    results: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """Node name -> its allocation result (Reserve, for PreBind)."""
    created: ResourceClaim | None = None
    """The claim PreBind created (for Unreserve)."""
    recorded: bool = False
    """PreBind wrote `pod.status.extendedResourceClaimStatus`."""


@dataclass(frozen=True)
class NodeClaim:
    claim: ResourceClaim
    requests: list[ExtendedRequest]


def _has_named_requests(pod: Pod | Obj) -> bool:
    """Any container requests a resource with a prefix (extended resources only have one)."""
    spec = meta.pod_spec(pod)
    for container in (*(spec.get("initContainers") or ()), *(spec.get("containers") or ())):
        if any("/" in name for name in (container.get("resources") or {}).get("requests") or ()):
            return True
    return False


def _allocatable(node_info: NodeInfo, resource: str) -> bool:
    value = ((node_info.node.get("status") or {}).get("allocatable") or {}).get(resource)
    return value not in (None, "", "0", 0)


def _in_flight_uid(pod_info: PodInfo) -> str:
    return f"{pod_info.uid}{GENERATE_NAME_SUFFIX}in-flight"


def recorded_claim(pod: Pod | Obj, claims: Lister) -> list[PodClaim[ResourceClaim]]:
    """The claim an earlier cycle created and recorded in the pod's status, as one of the
    pod's claims; raises ClaimLookupError when it is gone."""
    name = extended.claim_name(pod)
    if name is None:
        return []
    claim = cast("ResourceClaim | None", claims.get(name, meta.namespace(pod)))
    if claim is None:
        raise ClaimLookupError(f'resourceclaim.resource.k8s.io "{name}" not found')
    return [PodClaim(extended.SPECIAL_CLAIM_NAME, claim)]


class ExtendedResources:
    def __init__(self, client: Client, tracker: ClaimTracker, classes: Lister) -> None:
        self._client = client
        self._tracker = tracker
        self._classes = classes

    def pre_filter(self, pod_info: PodInfo) -> ExtendedState | None:
        """The pod's requests DRA may serve; None without any (or when an earlier cycle's
        claim is recorded: that one is one of the pod's claims)."""
        pod = pod_info.pod
        if extended.claim_name(pod) is not None or not _has_named_requests(pod):
            return None
        requests = extended.extended_requests(pod, extended.class_mapping(self._classes.list()))
        return ExtendedState(requests) if requests else None

    def node_claim(
        self, state: ExtendedState, pod_info: PodInfo, node_info: NodeInfo
    ) -> NodeClaim | None:
        """The in-memory claim of the requests `node_info` lacks the resource of, or None."""
        wanted = [r for r in state.requests if not _allocatable(node_info, r.resource_name)]
        if not wanted:
            return None
        key = frozenset(r.resource_name for r in wanted)
        found = state.claims.get(key)
        if found is None:
            claim: ResourceClaim = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {
                    "name": extended.SPECIAL_CLAIM_NAME,
                    "namespace": pod_info.namespace,
                    "uid": _in_flight_uid(pod_info),
                },
                "spec": {"devices": {"requests": extended.device_requests(wanted)}},
            }
            found = state.claims[key] = NodeClaim(claim, wanted)
        return found

    @staticmethod
    def filtered(state: ExtendedState, node_name: str, found: NodeClaim) -> None:
        """The in-memory claim fits `node_name` (its result is built at Reserve)."""
        state.node_claims[node_name] = found

    def reserve(
        self, state: ExtendedState, pod_info: PodInfo, node_name: str, result: Mapping[str, Any]
    ) -> bool:
        """The node's allocation (`result`) becomes in flight; False when the node needs no
        extended-resource claim (nothing to do)."""
        found = state.node_claims.get(node_name)
        if found is None:
            return False
        state.results[node_name] = result
        flying = deep_copy(found.claim)
        flying["status"] = {"allocation": deep_copy(dict(state.results[node_name]))}
        self._tracker.set_in_flight(flying, pod_info.uid)
        return True

    async def unreserve(self, state: ExtendedState, pod_info: PodInfo) -> None:
        self._tracker.drop_in_flight(_in_flight_uid(pod_info), pod_info.uid)
        created, state.created = state.created, None
        if created is None:
            return
        name = created["metadata"]["name"]
        try:
            # Without its allocation, reservation and finalizer the claim goes at once.
            current = await self._client.get(RESOURCE_CLAIMS_V1, name, pod_info.namespace)
            current = deep_copy(current)
            current["status"] = {}
            current = await self._client.update(RESOURCE_CLAIMS_V1, current, subresource="status")
            current["metadata"]["finalizers"] = [
                f
                for f in current["metadata"].get("finalizers") or ()
                if f != DELETE_PROTECTION_FINALIZER
            ]
            await self._client.update(RESOURCE_CLAIMS_V1, current)
            await self._client.delete(RESOURCE_CLAIMS_V1, name, pod_info.namespace)
            if not state.recorded:
                return
            state.recorded = False
            await self._client.patch(
                kinds.PODS,
                pod_info.name,
                {"status": {"extendedResourceClaimStatus": None}},
                pod_info.namespace,
                subresource="status",
            )
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                log.warning("Unreserve: extended resource claim %s: %s", name, err)

    async def pre_bind(self, state: ExtendedState, pod_info: PodInfo, node_name: str) -> None:
        """Create the node's claim with its allocation and the pod's reservation, then record
        it in the pod's status. Raises StatusError."""
        found = state.node_claims.get(node_name)
        if found is None:
            return
        obj: ResourceClaim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "generateName": pod_info.name[: _NAME_MAX - len(GENERATE_NAME_SUFFIX)]
                + GENERATE_NAME_SUFFIX,
                "namespace": pod_info.namespace,
                "annotations": {extended.EXTENDED_CLAIM_ANNOTATION: "true"},
                "finalizers": [DELETE_PROTECTION_FINALIZER],
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": pod_info.name,
                        "uid": pod_info.uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": cast(ResourceClaimSpec, deep_copy(found.claim["spec"])),
        }
        created = await self._client.create(RESOURCE_CLAIMS_V1, cast(Obj, obj), pod_info.namespace)
        state.created = cast(ResourceClaim, created)
        written = deep_copy(created)
        written["status"] = {
            "allocation": deep_copy(dict(state.results[node_name])),
            "reservedFor": [
                {"resource": "pods", "name": pod_info.name, "uid": pod_info.uid},
            ],
        }
        written = await self._client.update(RESOURCE_CLAIMS_V1, written, subresource="status")
        self._tracker.assume(written)
        self._tracker.drop_in_flight(_in_flight_uid(pod_info), pod_info.uid)
        status = {
            "resourceClaimName": written["metadata"]["name"],
            "requestMappings": extended.request_mappings(found.requests),
        }
        await self._client.patch(
            kinds.PODS,
            pod_info.name,
            {"status": {"extendedResourceClaimStatus": status}},
            pod_info.namespace,
            subresource="status",
        )
        state.recorded = True
