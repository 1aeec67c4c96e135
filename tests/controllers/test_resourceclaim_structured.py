"""Resource claim controller in the structured mode: syncClaim on resource.k8s.io/v1 claims
removes reservations of finished or deleted pods and deallocates claims no pod uses any more
(clear `status.allocation`, then drop the delete-protection finalizer); generated claims are built
as v1 objects."""

from __future__ import annotations

from typing import cast

import pytest

from draplane.api.meta import Obj
from draplane.client.events import EventRecorder
from draplane.client.interface import Client
from draplane.client.lister import Lister
from draplane.client.mutationcache import MutationCache
from draplane.controllers.metrics import ResourceClaimMetrics
from draplane.controllers.resourceclaim_claim import sync_claim
from draplane.controllers.resourceclaim_context import ClaimControllerContext
from draplane.controllers.resourceclaim_pod import build_claim
from draplane.controllers.resourceclaim_structured import StructuredClaims
from draplane.controllers.uid_cache import UIDCache
from draplane.dra.resourcev1 import (
    DELETE_PROTECTION_FINALIZER,
    RESOURCE_CLAIMS_V1,
)
from draplane.testing.apiobjects import StaticLister
from draplane.testing.builders import make_pod
from draplane.testing.claimstore import ClaimStore
from draplane.testing.structured import (
    device_result,
    make_structured_claim,
    make_structured_claim_template,
)

ALLOCATION = {"devices": {"results": [device_result("gpu", "dev-0")]}}
RUNNING = make_pod("running").uid("running-uid").phase("Running").obj()
DONE = make_pod("done").uid("done-uid").phase("Succeeded").obj()


def _entry(pod: Obj) -> Obj:
    """The expected `status.reservedFor` entry of `pod`."""
    return {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}


def _claim(
    *pods: Obj, allocated: bool = True, finalizer: bool = True, deleting: bool = False
) -> Obj:
    claim = make_structured_claim("claim").uid("claim-uid").request("gpu", "gpu")
    if finalizer:
        claim.finalizer(DELETE_PROTECTION_FINALIZER)
    if deleting:
        claim.deletion_timestamp("2026-01-01T00:00:00Z")
    if allocated:
        claim.allocation(ALLOCATION)
    return (claim.reserved_for(*pods) if pods else claim).obj()


def _ctx(store: ClaimStore, pods: list[Obj]) -> ClaimControllerContext:
    client = Client(store)
    return ClaimControllerContext(
        client=client,
        pods=cast(Lister, StaticLister(pods)),
        claims=cast(Lister, store),
        templates=cast(Lister, StaticLister([])),
        claim_cache=MutationCache(cast(Lister, store)),
        deleted_pods=UIDCache(10),
        recorder=EventRecorder(client, "resource-claim-controller"),
        metrics=ResourceClaimMetrics(),
        policy=StructuredClaims(),
    )


@pytest.mark.parametrize(
    ("claim", "status", "finalizers", "writes"),
    [
        pytest.param(
            _claim(DONE), {}, [], ["status claim", "update claim"], id="done-pod-deallocates"
        ),
        pytest.param(
            _claim(RUNNING, DONE),
            {"allocation": ALLOCATION, "reservedFor": [_entry(RUNNING)]},
            [DELETE_PROTECTION_FINALIZER],
            ["status claim"],
            id="running-pod-keeps-allocation",
        ),
        pytest.param(
            _claim(), {}, [], ["status claim", "update claim"], id="unreserved-deallocates"
        ),
        pytest.param(
            _claim(RUNNING),
            {"allocation": ALLOCATION, "reservedFor": [_entry(RUNNING)]},
            [DELETE_PROTECTION_FINALIZER],
            [],
            id="in-use-untouched",
        ),
        pytest.param(
            _claim(finalizer=False),
            {"allocation": ALLOCATION},
            [],
            [],
            id="no-finalizer-left-alone",
        ),
        pytest.param(
            _claim(allocated=False, deleting=True),
            {},
            [],
            ["update claim"],
            id="deleting-unallocated-drops-finalizer",
        ),
        pytest.param(
            _claim(allocated=False), {}, [DELETE_PROTECTION_FINALIZER], [], id="unallocated-kept"
        ),
    ],
)
async def test_sync_claim_structured(
    claim: Obj, status: Obj, finalizers: list[str], writes: list[str]
) -> None:
    store = ClaimStore([claim])
    await sync_claim(_ctx(store, [RUNNING, DONE]), "default", "claim")
    stored = store.stored[("default", "claim")]
    assert (stored.get("status") or {}) == status
    assert (stored["metadata"].get("finalizers") or []) == finalizers
    assert store.writes == writes


def test_generated_claim_is_v1() -> None:
    pod = make_pod("pod").uid("pod-uid").obj()
    template = make_structured_claim_template(
        "tmpl", claim=make_structured_claim().request("gpu", "gpu")
    ).obj()
    claim = build_claim(
        pod=pod,
        pod_claim={"name": "gpu", "resourceClaimTemplateName": "tmpl"},
        template=template,
        rt=RESOURCE_CLAIMS_V1,
    )
    assert (claim["apiVersion"], claim["kind"]) == ("resource.k8s.io/v1", "ResourceClaim")
    assert claim["metadata"]["generateName"] == "pod-gpu-"
    assert claim["spec"] == template["spec"]["spec"]
