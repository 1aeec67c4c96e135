"""`explain` on a live 1.36 control plane, one test cluster per cause: the reason it names, the
checked fix it offers, and for most causes that fix applied through the API makes the real
scheduler bind the pod."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest
from tests.explain.conftest import (
    DRIVER,
    create_claim,
    create_class,
    create_node,
    create_pod,
    strip,
    wait_bound,
    wait_unschedulable,
)

from draplane.api import versions
from draplane.api.kinds import (
    DEVICE_CLASSES,
    NODES,
    PODS,
    RESOURCE_CLAIM_TEMPLATES_V1,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
)
from draplane.controlplane import ControlPlane
from draplane.explain import Report, Verdict, apply_changes, explain_pod, reasons as r
from draplane.testing.builders import make_node, make_pod
from draplane.testing.structured import (
    make_device,
    make_device_class,
    make_structured_claim,
    make_structured_claim_template,
    make_subrequest,
)

Setup = Callable[[ControlPlane], Awaitable[None]]
MODEL = f'device.attributes["{DRIVER}"].model'
SIZE = f'device.attributes["{DRIVER}"].size'


async def _holder(plane: ControlPlane, claim: object, name: str = "holder") -> None:
    """Pod `name` with `claim`, bound (so its devices are allocated) before `p` comes."""
    client = plane.client()
    created = await create_claim(client, claim)  # type: ignore[arg-type]
    await create_pod(client, name, claim=created["metadata"]["name"])
    await wait_bound(plane, name)


async def no_slice_for_driver(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_class(client, "nic", "nic.example.com")
    await create_node(client, "node-a", "dev-0")
    cordoned = make_node("node-b").unschedulable().obj()
    await create_node(client, "node-b", "nic-0", driver="nic.example.com", node=cordoned)
    await create_claim(client, make_structured_claim("c").request("nic", "nic").obj())
    await create_pod(client, "p", claim="c")


async def claim_selector_false(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", make_device("dev-0").attr("model", "a100"))
    claim = make_structured_claim("c").request("gpu", "gpu", selectors=[f'{MODEL} == "h100"'])
    await create_claim(client, claim.obj())
    await create_pod(client, "p", claim="c")


async def class_selector_false(plane: ControlPlane) -> None:
    client = plane.client()
    h100 = make_device_class("h100", DRIVER).selector(f'{MODEL} == "h100"').obj()
    await client.create(DEVICE_CLASSES, strip(h100))
    await create_node(client, "node-a", make_device("dev-0").attr("model", "a100"))
    await create_claim(client, make_structured_claim("c").request("gpu", "h100").obj())
    await create_pod(client, "p", claim="c")


async def cel_runtime_error(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", make_device("dev-0").attr("model", "a100"))
    selector = f'device.attributes["{DRIVER}"].memory > 4'
    claim = make_structured_claim("c").request("gpu", "gpu", selectors=[selector])
    await create_claim(client, claim.obj())
    await create_pod(client, "p", claim="c")


async def not_enough_devices(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0", "dev-1")
    await _holder(plane, make_structured_claim("held").request("gpu", "gpu").obj())
    await create_claim(client, make_structured_claim("c").request("gpu", "gpu", count=2).obj())
    await create_pod(client, "p", claim="c")


async def all_devices_held(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0", "dev-1")
    for i in range(2):
        held = make_structured_claim(f"held-{i}").request("gpu", "gpu").obj()
        await _holder(plane, held, name=f"holder-{i}")
    await create_claim(client, make_structured_claim("c").request("gpu", "gpu", count=2).obj())
    await create_pod(client, "p", claim="c")


async def held_by_template_claim(plane: ControlPlane) -> None:
    """The holder's claim is generated from a ResourceClaimTemplate (owned by its pod)."""
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0")
    claim = make_structured_claim().request("gpu", "gpu")
    template = make_structured_claim_template("gpu", claim=claim).obj()
    await client.create(RESOURCE_CLAIM_TEMPLATES_V1, strip(template), "default")
    holder = make_pod("holder").claim_template("gpu", "gpu", mode=versions.STRUCTURED).obj()
    await create_pod(client, "holder", pod=holder)
    await wait_bound(plane, "holder")
    await create_claim(client, make_structured_claim("c").request("gpu", "gpu").obj())
    await create_pod(client, "p", claim="c")


async def counters_exhausted(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    devices = [
        make_device("full").attr("size", "full").consumes("gpu-0", memory="8Gi"),
        make_device("half-0").attr("size", "half").consumes("gpu-0", memory="4Gi"),
        make_device("half-1").attr("size", "half").consumes("gpu-0", memory="4Gi"),
    ]
    await create_node(client, "node-a", *devices, shared={"gpu-0": {"memory": "8Gi"}})
    held = make_structured_claim("held").request("gpu", "gpu", selectors=[f'{SIZE} == "half"'])
    await _holder(plane, held.obj())
    claim = make_structured_claim("c").request("gpu", "gpu", selectors=[f'{SIZE} == "full"'])
    await create_claim(client, claim.obj())
    await create_pod(client, "p", claim="c")


async def capacity_exhausted(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    shared = make_device("shared-0").allow_multiple_allocations().capacity("memory", "8Gi")
    await create_node(client, "node-a", shared)
    held = make_structured_claim("held").request("gpu", "gpu", capacity={"memory": "6Gi"})
    await _holder(plane, held.obj())
    claim = make_structured_claim("c").request("gpu", "gpu", capacity={"memory": "4Gi"})
    await create_claim(client, claim.obj())
    await create_pod(client, "p", claim="c")


async def device_taint(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", make_device("dev-0").taint("maintenance", value="fw"))
    await create_claim(client, make_structured_claim("c").request("gpu", "gpu").obj())
    await create_pod(client, "p", claim="c")


def _numa(name: str, numa: int) -> object:
    return make_device(name).attr("numa", numa)


async def match_attribute(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", _numa("dev-0", 0), _numa("dev-1", 1))
    claim = make_structured_claim("c").request("a", "gpu").request("b", "gpu")
    await create_claim(client, claim.match_attribute(f"{DRIVER}/numa").obj())
    await create_pod(client, "p", claim="c")


async def distinct_attribute(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", _numa("dev-0", 0), _numa("dev-1", 0))
    claim = make_structured_claim("c").request("a", "gpu").request("b", "gpu")
    await create_claim(client, claim.distinct_attribute(f"{DRIVER}/numa").obj())
    await create_pod(client, "p", claim="c")


async def first_available(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0")
    claim = make_structured_claim("c").first_available(
        "gpu", make_subrequest("quad", "gpu", count=4), make_subrequest("pair", "gpu", count=2)
    )
    await create_claim(client, claim.obj())
    await create_pod(client, "p", claim="c")


async def node_selector(plane: ControlPlane) -> None:
    client = plane.client()
    await create_node(client, "node-a")
    await create_pod(client, "p", pod=make_pod("p").node_selector({"gpu": "yes"}).obj())


async def node_affinity(plane: ControlPlane) -> None:
    client = plane.client()
    await create_node(client, "node-a")
    pod = make_pod("p").obj()
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b", "c"]}]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    await create_pod(client, "p", pod=pod)


async def node_taint(plane: ControlPlane) -> None:
    client = plane.client()
    await create_node(client, "node-a", node=make_node("node-a").taint("ml", "NoSchedule").obj())
    await create_pod(client, "p")


async def node_resources(plane: ControlPlane) -> None:
    client = plane.client()
    await create_node(client, "node-a", node=make_node("node-a").capacity(cpu="2", pods="10").obj())
    await create_pod(client, "p", pod=make_pod("p").requests(cpu="4").obj())


@dataclass(frozen=True)
class Case:
    setup: Setup
    code: str
    text: str
    """In the reason's summary or detail."""
    fix: str | None
    """In the summary of a verified fix; None: no verified fix (exit code 3)."""
    apply: bool = False
    """Apply that fix through the API and wait for the scheduler to bind the pod."""


CASES = [
    pytest.param(Case(no_slice_for_driver, r.NO_SLICE_FOR_DRIVER, "nic.example.com",
                      "add a node like node-b", apply=True), id="no-slice-for-driver"),
    pytest.param(Case(claim_selector_false, r.SELECTOR_FALSE, "model='a100'",
                      "drop selector", apply=True), id="claim-selector-false"),
    pytest.param(Case(class_selector_false, r.SELECTOR_FALSE, "class h100 selector #1", None),
                 id="class-selector-false"),
    pytest.param(Case(cel_runtime_error, r.CEL_RUNTIME_ERROR, "memory", "drop selector",
                      apply=True), id="cel-runtime-error"),
    pytest.param(Case(not_enough_devices, r.NOT_ENOUGH_DEVICES, "held by default/held",
                      "release claim default/held", apply=True), id="not-enough-devices"),
    pytest.param(Case(not_enough_devices, r.NOT_ENOUGH_DEVICES, "wanted 2, free 1",
                      "lower the count", apply=True), id="lower-the-count"),
    pytest.param(Case(all_devices_held, r.NOT_ENOUGH_DEVICES, "wanted 2, free 0",
                      "release claims default/held-0, default/held-1", apply=True),
                 id="release-two-claims"),
    pytest.param(Case(held_by_template_claim, r.NOT_ENOUGH_DEVICES, "held by default/holder-gpu",
                      "release claim default/holder-gpu", apply=True), id="template-claim-holder"),
    pytest.param(Case(counters_exhausted, r.COUNTERS_EXHAUSTED, "needs 8Gi, 4Gi left",
                      "release claim default/held", apply=True), id="counters-exhausted"),
    pytest.param(Case(capacity_exhausted, r.CAPACITY_EXHAUSTED, "requested 4Gi, free 2Gi",
                      "release claim default/held", apply=True), id="capacity-exhausted"),
    pytest.param(Case(device_taint, r.DEVICE_TAINT, "maintenance=fw:NoSchedule",
                      "tolerate device taint", apply=True), id="device-taint"),
    pytest.param(Case(match_attribute, r.CONSTRAINT, "matchAttribute driver.example.com/numa",
                      "drop the constraint", apply=True), id="match-attribute"),
    pytest.param(Case(distinct_attribute, r.CONSTRAINT, "distinctAttribute",
                      "drop the constraint"), id="distinct-attribute"),
    pytest.param(Case(first_available, r.NOT_ENOUGH_DEVICES, "wanted 2, free 1",
                      "use firstAvailable subrequest pair", apply=True), id="first-available"),
    pytest.param(Case(node_selector, "NodeAffinity", "didn't match Pod's node affinity",
                      "label node node-a gpu=yes", apply=True), id="node-affinity"),
    pytest.param(Case(node_affinity, "NodeAffinity", "didn't match Pod's node affinity",
                      "label node node-a zone=b", apply=True), id="required-node-affinity"),
    pytest.param(Case(node_taint, "TaintToleration", "untolerated taint",
                      "tolerate node taint ml", apply=True), id="node-taint"),
    pytest.param(Case(node_resources, "NodeResourcesFit", "Insufficient cpu", None),
                 id="node-resources"),
]  # fmt: skip


def _reason_texts(report: Report, code: str) -> list[str]:
    return [
        f"{x.summary} {x.detail}" for g in report.groups for x in g.reasons if x.code == code
    ] + [f"{x.summary} {x.detail}" for x in report.pod_reasons if x.code == code]


@pytest.mark.parametrize("case", CASES)
async def test_explain_names_the_cause_and_a_checked_fix(plane: ControlPlane, case: Case) -> None:
    client = plane.client()
    await case.setup(plane)
    await wait_unschedulable(plane, "p")
    report = await explain_pod(client, "default", "p")
    texts = _reason_texts(report, case.code)
    assert texts, report.json()
    assert any(case.text in t for t in texts), texts
    if case.fix is None:
        assert report.fixes == []
        assert report.verdict is Verdict.UNSCHEDULABLE
        return
    assert report.verdict is Verdict.UNSCHEDULABLE_WITH_FIX
    assert all(f.verified for f in report.fixes)
    fix = next((f for f in report.fixes if case.fix in f.summary), None)
    assert fix is not None, [f.summary for f in report.fixes]
    if case.apply:
        await apply_changes(client, fix.changes)
        # Each of these clusters has one node the pod can fit once the fix is made.
        assert await wait_bound(plane, "p") == fix.node
        after = await explain_pod(client, "default", "p")
        assert after.verdict is Verdict.SCHEDULABLE


async def test_explain_writes_nothing(plane: ControlPlane) -> None:
    client = plane.client()
    await not_enough_devices(plane)
    await wait_unschedulable(plane, "p")

    async def versions_now() -> dict[str, str]:
        out = {}
        for rt in (NODES, PODS, RESOURCE_CLAIMS_V1, RESOURCE_SLICES, DEVICE_CLASSES):
            for item in (await client.list(rt))["items"]:
                md = item["metadata"]
                out[f"{rt.resource}/{md.get('namespace', '')}/{md['name']}"] = md["resourceVersion"]
        return out

    before = await versions_now()
    report = await explain_pod(client, "default", "p")
    assert report.fixes
    assert await versions_now() == before


async def test_bound_pod_is_scheduled(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0")
    await create_claim(client, make_structured_claim("c").request("gpu", "gpu").obj())
    await create_pod(client, "p", claim="c")
    node = await wait_bound(plane, "p")
    report = await explain_pod(client, "default", "p")
    assert (report.node_name, report.verdict) == (node, Verdict.SCHEDULABLE)


async def test_pre_filter_rejection_concerns_every_node(plane: ControlPlane) -> None:
    """PreFilter rejects before any node is looked at: the reason is the pod's, not a node's."""
    client = plane.client()
    await create_node(client, "node-a", "dev-0")
    await create_claim(client, make_structured_claim("c").request("gpu", "missing").obj())
    await create_pod(client, "p", claim="c")
    await wait_unschedulable(plane, "p")
    report = await explain_pod(client, "default", "p")
    assert [(x.plugin, x.summary) for x in report.pod_reasons] == [
        ("DynamicResources", "request gpu: device class missing does not exist")
    ]
    assert (report.groups, report.verdict) == ([], Verdict.UNSCHEDULABLE)
