"""End to end through the real API: a `pod.status.resourceClaimStatuses` entry without a
`resourceClaimName` means "no claim is needed" (SEED.txt, spec/claim-controller.md §1.1, §3.1),
and every component skips that pod claim: the claim controller creates nothing, the scheduler
schedules the pod, the node runs it without preparing anything, NodeRestriction lets the node
write the pod status (but not change that entry), and the node authorizer grants no claim
through it."""

from __future__ import annotations

import pytest

from draplane.api import errors, kinds, meta
from draplane.api.auth import node_user
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane
from draplane.drivers.example import ExampleNodePlugin
from draplane.testing.apistate import events_for, wait_for
from draplane.testing.builders import make_claim, make_pod

pytestmark = pytest.mark.slow

TIMEOUT = 30.0


async def pod_where(client: Client, probe_phase: str) -> Obj | None:
    pod = await client.get(kinds.PODS, "app", "default")
    return pod if (pod.get("status") or {}).get("phase") == probe_phase else None


async def test_every_component_skips_a_pod_claim_that_needs_no_claim(
    plane: ControlPlane,
) -> None:
    admin = plane.client()
    # The template never exists, so the controller cannot create a claim before the status
    # entry below says that none is needed.
    pod = await admin.create(
        kinds.PODS,
        make_pod("app").claim_template("gpu", "never-created").obj(),
        "default",
    )
    await wait_for(
        lambda: events_for(admin, pod, reason="FailedResourceClaimCreation"),
        timeout=TIMEOUT,
        what="the controller tried",
    )
    current = meta.deep_copy(await admin.get(kinds.PODS, "app", "default"))
    current.setdefault("status", {})["resourceClaimStatuses"] = [{"name": "gpu"}]
    await admin.update(kinds.PODS, current, subresource="status")

    # Scheduler (PreEnqueue, Filter, Reserve) and node: scheduled, bound and Running.
    running = await wait_for(lambda: pod_where(admin, "Running"), timeout=TIMEOUT, what="Running")
    node = running["spec"]["nodeName"]
    assert running["status"]["resourceClaimStatuses"] == [{"name": "gpu"}]
    # Claim controller: nothing was created for the pod, and no PodSchedulingContext needed.
    assert (await admin.list(kinds.RESOURCE_CLAIMS, "default"))["items"] == []
    assert (await admin.list(kinds.POD_SCHEDULING_CONTEXTS, "default"))["items"] == []
    plugin = plane.node_plugins.plugin("driver.example.com", node)
    assert isinstance(plugin, ExampleNodePlugin)
    assert plugin.prepared == {}

    # NodeRestriction: the node wrote the Running status, but may not fill in the entry.
    as_node = plane.client(node_user(node))
    changed = meta.deep_copy(running)
    changed["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "app-gpu"}]
    with pytest.raises(errors.StatusError) as denied:
        await as_node.update(kinds.PODS, changed, subresource="status")
    assert denied.value.code == 403
    assert "cannot update resource claim statues" in str(denied.value)

    # Node authorizer: the entry names no claim, so no claim is reachable from the node, not
    # even one named like the pod claim.
    await admin.create(kinds.RESOURCE_CLAIMS, make_claim("app-gpu").obj(), "default")
    with pytest.raises(errors.StatusError) as forbidden:
        await as_node.get(kinds.RESOURCE_CLAIMS, "app-gpu", "default")
    assert forbidden.value.code == 403


async def test_node_may_omit_a_null_claim_name(plane: ControlPlane) -> None:
    """A Go kubelet omits a nil `resourceClaimName`; the entry is unchanged all the same."""
    admin = plane.client()
    node = plane.config.node_prefix + "0"
    pod = await admin.create(
        kinds.PODS,
        make_pod("app").claim_template("gpu", "never-created").node(node).obj(),
        "default",
    )
    pod = meta.deep_copy(pod)
    pod.setdefault("status", {})["resourceClaimStatuses"] = [
        {"name": "gpu", "resourceClaimName": None}
    ]
    pod = meta.deep_copy(await admin.update(kinds.PODS, pod, subresource="status"))
    pod["status"]["resourceClaimStatuses"] = [{"name": "gpu"}]
    pod["status"]["message"] = "written by the node"
    updated = await plane.client(node_user(node)).update(kinds.PODS, pod, subresource="status")
    assert updated["status"]["message"] == "written by the node"
