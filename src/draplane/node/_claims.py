"""The node's DRA manager: prepare and unprepare a pod's claims (as kubelet's
pkg/kubelet/cm/dra/manager.go, 1.28).

Claims are resolved with `dra.name()`, fetched from the API server (never a cache, as kubelet
does), checked (owner, allocated, reserved for the pod, available on this node) and handed to
the claim driver's NodePlugin in this process, or, on a node with a kubelet directory, to the
kubelet plugins registered with it (`DRAManager`: batched per driver, checkpointed). A claim
that is not ready raises `ClaimNotReady`.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from draplane import dra
from draplane.api import deviceconfig, kinds, meta, podrefs
from draplane.api.errors import StatusError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.nodeselector import NodeSelector
from draplane.api.types import Pod, PodResourceClaim
from draplane.client.interface import Client
from draplane.dra import extended
from draplane.dra.kubeletplugin import NodePluginRegistry
from draplane.kubeletapi.cdi import CDIError
from draplane.node._dramanager import DRAManager, PrepareFailed

NOT_READY = "ClaimNotReady"
PREPARE_FAILED = "FailedPrepareDynamicResources"
CDI_FAILED = "Failed"
"""The reason of the event when the runtime cannot resolve a prepared CDI device."""


class ClaimNotReady(Exception):
    """The pod cannot start yet; `reason` is the Warning event's reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class PreparedClaim:
    pod_claim_name: str
    claim: Obj
    driver_name: str
    devices: tuple[str, ...]
    device_requests: tuple[tuple[str, ...], ...] = ()
    """Per entry of `devices` (with kubelet plugins), the claim requests the plugin prepared
    it for; empty: for every request."""

    def devices_for(self, requests: set[str] | None) -> list[str]:
        """The CDI devices of these requests (None: all), as kubelet gives a container that
        names `resources.claims[].request` only that request's devices (a subrequest
        `<request>/<subrequest>` counts for its request)."""
        if requests is None or not self.device_requests:
            return list(self.devices)
        return [
            device
            for device, names in zip(self.devices, self.device_requests, strict=True)
            if any(podrefs.picks(requests, n) for n in names)
        ]


@dataclass(frozen=True)
class NodeContext:
    client: Client
    node: Obj
    plugins: NodePluginRegistry
    claims: ResourceType = kinds.RESOURCE_CLAIMS
    """The ResourceClaim kind of the API server's mode (v1alpha2, or v1 with structured
    parameters)."""
    dra: DRAManager | None = None
    """The node's kubelet plugins (a node with `--kubelet-dir`); None: `plugins` serve."""

    @property
    def node_name(self) -> str:
        return meta.name(self.node)


async def prepare_claims(ctx: NodeContext, pod: Pod) -> list[PreparedClaim]:
    """Prepare every claim the pod's containers use, in spec order.

    As kubelet does, a claim no container uses is still resolved, fetched and checked for
    ownership and reservation (any failure holds the pod back), but not prepared.
    """
    prepared: list[PreparedClaim] = []
    wanted: list[tuple[PodResourceClaim, Obj, str]] = []
    used = _claims_used_by_containers(pod)
    pod_claims = [(c, c.get("name") in used) for c in meta.pod_claims(pod)]
    extended_claim = extended.pod_claim(pod)
    if extended_claim is not None:
        # The scheduler's claim for DRA-backed extended resources (DRAExtendedResource).
        pod_claims.append((extended_claim, True))
    for pod_claim, is_used in pod_claims:
        claim = await _reserved_claim(ctx, pod, pod_claim)
        if claim is None or not is_used:
            continue
        _check_available(ctx, claim)
        for driver_name in claim_drivers(claim):
            if ctx.dra is None:
                prepared.append(await _prepare(ctx, pod_claim, claim, driver_name))
            else:
                wanted.append((pod_claim, claim, driver_name))
    if ctx.dra is not None:
        prepared = await _prepare_with_plugins(ctx.dra, pod, wanted)
    return prepared


async def _prepare_with_plugins(
    dra: DRAManager, pod: Pod, wanted: list[tuple[PodResourceClaim, Obj, str]]
) -> list[PreparedClaim]:
    try:
        infos = await dra.prepare(meta.uid(pod), [(claim, driver) for _, claim, driver in wanted])
    except PrepareFailed as err:
        raise ClaimNotReady(PREPARE_FAILED, str(err)) from err
    return [
        PreparedClaim(
            pod_claim_name=str(pod_claim.get("name")),
            claim=claim,
            driver_name=driver,
            devices=tuple(
                i for d in infos[meta.uid(claim)].drivers[driver] for i in d.cdi_device_ids
            ),
            device_requests=tuple(
                d.request_names
                for d in infos[meta.uid(claim)].drivers[driver]
                for _ in d.cdi_device_ids
            ),
        )
        for pod_claim, claim, driver in wanted
    ]


def container_env(ctx: NodeContext, pod: Pod, claims: list[PreparedClaim]) -> str | None:
    """What the container runtime injects from the CDI devices of each container's claims, as
    the `deviceconfig.CDI_ENV_CONDITION` message; None without a kubelet directory or devices.
    A device no CDI spec of the node defines fails the pod's start (`ClaimNotReady`)."""
    if ctx.dra is None:
        return None
    spec = meta.pod_spec(pod)
    by_container: dict[str, dict[str, str]] = {}
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        picked = podrefs.container_claim_requests(container)
        ids = [
            i
            for c in claims
            if c.pod_claim_name in picked
            for i in c.devices_for(picked[c.pod_claim_name])
        ]
        if not ids:
            continue
        try:
            by_container[str(container.get("name"))] = ctx.dra.container_env(ids)
        except CDIError as err:
            raise ClaimNotReady(CDI_FAILED, f"failed to inject CDI devices: {err}") from err
    return orjson.dumps(by_container).decode() if by_container else None


def claim_drivers(claim: Obj) -> list[str]:
    """The drivers to call for an allocated claim: v1alpha2's `status.driverName`, or every
    driver of a v1 allocation's `devices.results` (as kubelet 1.36 derives them)."""
    driver_name = str((claim.get("status") or {}).get("driverName") or "")
    return [driver_name] if driver_name else deviceconfig.drivers(claim)


async def _prepare(
    ctx: NodeContext, pod_claim: PodResourceClaim, claim: Obj, driver_name: str
) -> PreparedClaim:
    plugin = ctx.plugins.plugin(driver_name, ctx.node_name)
    if plugin is None:
        raise ClaimNotReady(
            PREPARE_FAILED,
            f"resource claim {meta.name(claim)}: no node plugin of driver "
            f"{driver_name!r} runs on node {ctx.node_name}",
        )
    try:
        devices = await plugin.prepare(claim)
    except Exception as err:
        raise ClaimNotReady(
            PREPARE_FAILED, f"prepare resource claim {meta.name(claim)}: {err}"
        ) from err
    return PreparedClaim(
        pod_claim_name=str(pod_claim.get("name")),
        claim=claim,
        driver_name=driver_name,
        devices=tuple(devices),
    )


async def unprepare_claims(ctx: NodeContext, claims: list[PreparedClaim], *, pod_uid: str) -> None:
    """The pod stopped: release its claims (with kubelet plugins: those no other pod on the
    node uses, whatever this run of the node prepared)."""
    if ctx.dra is not None:
        await ctx.dra.unprepare_pod(pod_uid)
        return
    for prepared in claims:
        plugin = ctx.plugins.plugin(prepared.driver_name, ctx.node_name)
        if plugin is not None:
            await plugin.unprepare(prepared.claim)


async def find_claims(ctx: NodeContext, pod: Pod) -> list[PreparedClaim]:
    """Best effort: the pod's claims as they are now, for unpreparing what an earlier run of
    this node prepared. Claims that cannot be read are left out."""
    found: list[PreparedClaim] = []
    extended_claim = extended.pod_claim(pod)
    named = dra.pod_claim_names(pod)
    if extended_claim is not None:
        named.append((extended_claim, extended.claim_name(pod)))
    for pod_claim, claim_name in named:
        if claim_name is None:
            continue
        try:
            claim = await ctx.client.get(ctx.claims, claim_name, meta.namespace(pod))
        except StatusError:
            continue
        found += [
            PreparedClaim(
                pod_claim_name=str(pod_claim.get("name")),
                claim=claim,
                driver_name=driver_name,
                devices=(),
            )
            for driver_name in claim_drivers(claim) or [""]
        ]
    return found


async def _reserved_claim(ctx: NodeContext, pod: Pod, pod_claim: PodResourceClaim) -> Obj | None:
    """The claim behind a pod claim, checked as kubelet's PrepareResources checks it; None when
    the pod status says no claim is needed."""
    pod_ref = f"{meta.namespace(pod)}/{meta.name(pod)}"
    try:
        claim_name, must_check_owner = dra.name(pod, pod_claim)
    except dra.ClaimNameError as err:
        raise ClaimNotReady(NOT_READY, f"prepare resource claim: {err}") from err
    if claim_name is None:
        return None
    try:
        claim = await ctx.client.get(ctx.claims, claim_name, meta.namespace(pod))
    except StatusError as err:
        raise ClaimNotReady(
            NOT_READY,
            f"failed to fetch ResourceClaim {claim_name} referenced by pod {pod_ref}: {err}",
        ) from err
    if must_check_owner:
        not_owner = dra.is_for_pod(pod, claim)
        if not_owner is not None:
            raise ClaimNotReady(NOT_READY, not_owner)
    if not dra.is_allocated(claim):
        raise ClaimNotReady(NOT_READY, f"resource claim {claim_name} is not allocated yet")
    if not dra.is_reserved_for_pod(pod, claim):
        raise ClaimNotReady(
            NOT_READY,
            f"pod {pod_ref}({meta.uid(pod)}) is not allowed to use resource claim "
            f"{claim_name}({meta.uid(claim)})",
        )
    return claim


def _check_available(ctx: NodeContext, claim: Obj) -> None:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    field = "availableOnNodes" if allocation.get("availableOnNodes") else "nodeSelector"
    selector = allocation.get(field)
    if not selector:
        return
    try:
        available = NodeSelector.parse(selector).matches(ctx.node)
    except ValueError as err:
        raise ClaimNotReady(
            NOT_READY, f"resource claim {meta.name(claim)}: invalid {field}: {err}"
        ) from err
    if not available:
        raise ClaimNotReady(
            NOT_READY,
            f"resource claim {meta.name(claim)} is not available on node {ctx.node_name}",
        )


def _claims_used_by_containers(pod: Pod) -> set[str]:
    spec = meta.pod_spec(pod)
    return {
        str(ref.get("name"))
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or [])
        for ref in (container.get("resources") or {}).get("claims") or []
    }
