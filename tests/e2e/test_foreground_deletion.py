"""End to end: foreground deletion of pods that own generated ResourceClaims finishes by itself.

A pod deleted in the foreground waits (finalizer `foregroundDeletion`) for its claim, which has
`blockOwnerDeletion`; the claim waits (driver finalizer) until it is no longer reserved. The
chain only unwinds because the kubelet reports a terminal phase for the deleted pod once its
containers stop (spec/workloads.md §8.1, §8.5): the claim controller then drops the
reservation, the driver deallocates, the claim goes and the garbage collector lets the pod go.
Whatever owns the pod, and whether its namespace is deleted meanwhile, everything disappears.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane import dra
from draplane.api import errors, kinds, meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod, make_template

pytestmark = pytest.mark.slow

TIMEOUT = 30.0


async def gone(client: Client, rt: ResourceType, name: str, namespace: str = "") -> bool:
    try:
        await client.get(rt, name, namespace)
    except errors.StatusError as err:
        return errors.is_not_found(err)
    return False


async def pod_with_claim(client: Client, namespace: str, *, owner: Obj | None = None) -> Obj:
    """Pod `app` with a claim from a template, Running with its claim allocated and reserved."""
    await client.create(
        kinds.RESOURCE_CLAIM_TEMPLATES, make_template("gpu", namespace).obj(), namespace
    )
    builder = make_pod("app", namespace).claim_template("gpu", "gpu")
    if owner is not None:
        builder.owner(owner["kind"], meta.name(owner), meta.uid(owner), block_owner_deletion=True)
    body = builder.obj()
    del body["metadata"]["uid"]
    await client.create(kinds.PODS, body, namespace)

    async def running() -> Obj | None:
        pod = await client.get(kinds.PODS, "app", namespace)
        if (pod.get("status") or {}).get("phase") != "Running":
            return None
        [(_, claim_name)] = dra.pod_claim_names(pod)
        assert claim_name is not None
        claim = await client.get(kinds.RESOURCE_CLAIMS, claim_name, namespace)
        return pod if dra.is_reserved_for_pod(pod, claim) else None

    return await wait_for(running, timeout=TIMEOUT, what="pod Running with a reserved claim")


@dataclass(frozen=True)
class Case:
    namespace: str
    owned_by_config_map: bool = False
    delete_namespace: bool = False


CASES = [
    pytest.param(Case("default"), id="pod-deleted-in-foreground"),
    pytest.param(Case("default", owned_by_config_map=True), id="owner-deleted-in-foreground"),
    pytest.param(Case("team", delete_namespace=True), id="namespace-deleted-meanwhile"),
]


@pytest.mark.parametrize("case", CASES)
async def test_foreground_deletion_completes(plane: ControlPlane, case: Case) -> None:
    admin = plane.client()
    if case.namespace != "default":
        await admin.create(kinds.NAMESPACES, {"metadata": {"name": case.namespace}})
    owner = None
    if case.owned_by_config_map:
        owner = await admin.create(
            kinds.CONFIGMAPS, {"metadata": {"name": "owner"}}, case.namespace
        )
    pod = await pod_with_claim(admin, case.namespace, owner=owner)
    [(_, claim_name)] = dra.pod_claim_names(pod)
    assert claim_name is not None

    if owner is not None:
        await admin.delete(
            kinds.CONFIGMAPS, "owner", case.namespace, propagation_policy="Foreground"
        )
    else:
        await admin.delete(kinds.PODS, "app", case.namespace, propagation_policy="Foreground")
    if case.delete_namespace:
        await admin.delete(kinds.NAMESPACES, case.namespace)

    async def all_gone() -> bool:
        return await gone(admin, kinds.PODS, "app", case.namespace) and await gone(
            admin, kinds.RESOURCE_CLAIMS, claim_name, case.namespace
        )

    await wait_for(all_gone, timeout=TIMEOUT, what="pod and claim gone")
    if owner is not None:
        await wait_for(
            lambda: gone(admin, kinds.CONFIGMAPS, "owner", case.namespace),
            timeout=TIMEOUT,
            what="owner gone",
        )
    if case.delete_namespace:
        await wait_for(
            lambda: gone(admin, kinds.NAMESPACES, case.namespace),
            timeout=TIMEOUT,
            what="namespace gone",
        )
