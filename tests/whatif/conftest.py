"""Test clusters for `draplane whatif`, `dump`, `record` and `replay`: 1.36 control planes
without kubelets or drivers (`tests.explain.conftest`), built through the API with the
structured builders; `build_cluster` makes the same cluster on any plane."""

from __future__ import annotations

from tests.explain.conftest import (
    create_claim,
    create_class,
    create_node,
    create_pod,
    plane,
    strip,
    wait_bound,
)

from draplane.api import versions
from draplane.api.kinds import RESOURCE_CLAIM_TEMPLATES_V1, SERVICE_ACCOUNTS
from draplane.api.meta import Obj
from draplane.controlplane import ControlPlane
from draplane.testing.builders import make_pod
from draplane.testing.structured import make_structured_claim, make_structured_claim_template

__all__ = ["build_cluster", "plane", "template_pod"]


def template_pod(name: str) -> Obj:
    """A pod whose claim comes from the ResourceClaimTemplate `one-gpu`."""
    return make_pod(name).claim_template("gpu", "one-gpu", mode=versions.STRUCTURED).obj()


async def build_cluster(plane: ControlPlane) -> None:
    """node-a with 2 devices; pods p0 (a user claim) and p1 (from a template) bound there by
    the real scheduler; p2 and p3 (templates; p3 runs as ServiceAccount `trainer`) pending
    for want of devices."""
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0", "dev-1")
    template = make_structured_claim_template(
        "one-gpu", claim=make_structured_claim().request("gpu", "gpu")
    ).obj()
    await client.create(RESOURCE_CLAIM_TEMPLATES_V1, strip(template), "default")
    await create_claim(client, make_structured_claim("c0").request("gpu", "gpu").obj())
    await create_pod(client, "p0", claim="c0")
    await wait_bound(plane, "p0")
    await create_pod(client, "p1", pod=template_pod("p1"))
    await wait_bound(plane, "p1")
    await create_pod(client, "p2", pod=template_pod("p2"))
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "trainer"}}
    await client.create(SERVICE_ACCOUNTS, account, "default")
    p3 = template_pod("p3")
    p3["spec"]["serviceAccountName"] = "trainer"  # admission looks it up, on the fork too
    await create_pod(client, "p3", pod=p3)
