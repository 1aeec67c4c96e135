"""The benchmark workloads (scheduler_perf's DRA shapes) and the objects they create.

A `Workload` is pure data: node count, init and measured pods, the drivers and the claim
templates each pod uses. `--scale small` divides the counts by ten; devices per node stay, so
the cluster fills exactly as at full scale.

Each shape names the mode whose kinds it is written in (`Workload.mode`): claim templates and
pod claims take that mode's form. Modes (`bench_mode`): `classic-*` run classic DRA (1.28)
only, `structured-*` structured parameters (1.36) only, every other workload either, 1.36
unless `--kubernetes-version 1.28`; `in_mode` turns a classic shape into its 1.36 one (the
templates request one device of the example driver's DeviceClass, whose devices the nodes
publish as ResourceSlices).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from draplane.api import versions
from draplane.api.meta import Obj
from draplane.controlplane import DriverSpec
from draplane.dra.claims import pod_resource_claim
from draplane.drivers.example import DEVICE_CLASS_NAME
from draplane.fleets import Fleet

NAMESPACE = "bench"
PHASE_LABEL = "bench.draplane.io/phase"
PAUSE_IMAGE = "registry.k8s.io/pause:3.9"
SCALES = ("small", "full")
SMALL_DIVISOR = 10


@dataclass(frozen=True)
class ClaimTemplate:
    """A ResourceClaimTemplate and the pod claims (by name) every pod draws from it."""

    name: str
    resource_class: str
    pod_claims: tuple[str, ...]


@dataclass(frozen=True)
class Workload:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    mode: versions.Mode
    """The mode whose kinds the shape is written in (1.36: `resource_class` names a
    DeviceClass); the control plane serves it."""
    drivers: tuple[DriverSpec, ...] = ()
    templates: tuple[ClaimTemplate, ...] = ()
    attempts_floor: float = 1.0
    """Scheduling attempts per pod when nothing is wasted (classic DRA: 2, 4 claims: 3)."""
    steady_pods: int = 0
    """Steady state (scheduler_perf `steadyState`): this many measured pods exist at all
    times; each one bound is deleted and replaced, for `steady_seconds`."""
    steady_seconds: float = 0.0
    fill: str = ""
    """Claims allocated through the allocator before measuring: "empty" none, "half" half
    the devices, "full" all but `steady_pods` devices."""
    fleet: Fleet | None = None
    """`draplane bench --fleet`: the nodes' devices and the classes from a fleet profile
    (`drivers` unused), the claims asking its first DeviceClass (`in_fleet`)."""

    @property
    def claims_per_pod(self) -> int:
        return sum(len(t.pod_claims) for t in self.templates)

    @property
    def allocated_claims(self) -> int:
        devices = self.nodes * sum(d.devices_per_node for d in self.drivers)
        return {"half": devices // 2, "full": devices - self.steady_pods}.get(self.fill, 0)

    def shrunk(self, divisor: int) -> Workload:
        """The same shape with node and pod counts divided by `divisor` (at least 1 each; none
        stays none); a steady state keeps its pods and lasts at least 2 s."""
        return replace(
            self,
            nodes=max(1, self.nodes // divisor),
            init_pods=max(1, self.init_pods // divisor) if self.init_pods else 0,
            measured_pods=max(1, self.measured_pods // divisor),
            steady_seconds=max(2.0, self.steady_seconds / divisor) if self.steady_pods else 0.0,
        )


_DRIVER = DriverSpec(name="driver.example.com", resource_class="example")
_DRIVER2 = DriverSpec(name="driver2.example.com", resource_class="example2")

WORKLOADS: dict[str, Workload] = {
    "classic-template": Workload(
        name="classic-template",
        nodes=100,
        init_pods=1000,
        measured_pods=1000,
        mode=versions.CLASSIC,
        drivers=(replace(_DRIVER, devices_per_node=20),),
        templates=(ClaimTemplate("test-claim-template", "example", ("resource",)),),
        attempts_floor=2.0,
    ),
    "classic-multi-claim": Workload(
        name="classic-multi-claim",
        nodes=100,
        init_pods=1000,
        measured_pods=1000,
        mode=versions.CLASSIC,
        drivers=(replace(_DRIVER, devices_per_node=40), replace(_DRIVER2, devices_per_node=40)),
        templates=(
            ClaimTemplate("test-claim-template", "example", ("resource-1a", "resource-1b")),
            ClaimTemplate(
                "another-test-claim-template", "example2", ("resource-2a", "resource-2b")
            ),
        ),
        attempts_floor=3.0,
    ),
    "basic": Workload(
        name="basic", nodes=500, init_pods=500, measured_pods=1000, mode=versions.CLASSIC
    ),
    # scheduler_perf dra/ SchedulingWithResourceClaimTemplate 5000pods_500nodes: 500 nodes with
    # 10 devices each, 2500 init and 2500 measured pods with one generated claim (the cluster
    # becomes full); the scheduler allocates, so one attempt per pod.
    "structured-template": Workload(
        name="structured-template",
        nodes=500,
        init_pods=2500,
        measured_pods=2500,
        mode=versions.STRUCTURED,
        drivers=(replace(_DRIVER, devices_per_node=10),),
        templates=(ClaimTemplate("test-claim-template", DEVICE_CLASS_NAME, ("resource",)),),
        attempts_floor=1.0,
    ),
    # scheduler_perf dra/ SteadyStateClusterResourceClaimTemplate empty/half/full_500nodes:
    # 500 nodes with 10 devices, 0 / 2500 / 4990 claims allocated beforehand, then 10 pods with
    # one generated claim each, re-created as soon as they are scheduled, for 10 s.
    **{
        name: Workload(
            name=name,
            nodes=500,
            init_pods=0,
            measured_pods=10,
            mode=versions.STRUCTURED,
            drivers=(replace(_DRIVER, devices_per_node=10),),
            templates=(ClaimTemplate("test-claim-template", DEVICE_CLASS_NAME, ("resource",)),),
            attempts_floor=1.0,
            steady_pods=10,
            steady_seconds=10.0,
            fill=fill,
        )
        for name, fill in (
            ("structured-steady", "empty"),
            ("structured-steady-half", "half"),
            ("structured-steady-full", "full"),
        )
    },
}


def workload(name: str, scale: str) -> Workload:
    """The named workload at `scale` ("small" or "full"); ValueError for unknown names."""
    if name not in WORKLOADS:
        raise ValueError(f"unknown workload {name!r}: one of {', '.join(WORKLOADS)}")
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}: one of {', '.join(SCALES)}")
    found = WORKLOADS[name]
    return found.shrunk(SMALL_DIVISOR) if scale == "small" else found


def claim_template(
    template: ClaimTemplate, *, mode: versions.Mode, namespace: str = NAMESPACE
) -> Obj:
    """The ResourceClaimTemplate of `mode` (created as `mode.claim_templates`): a classic one
    with delayed (WaitForFirstConsumer) allocation, or a resource.k8s.io/v1 one requesting one
    device of the class (scheduler_perf's templates/resourceclaimtemplate.yaml)."""
    return {
        "apiVersion": mode.claim_templates.api_version,
        "kind": mode.claim_templates.kind,
        "metadata": {"name": template.name, "namespace": namespace},
        "spec": {"spec": _CLAIM_SPECS[mode.dra](template)},
    }


def _classic_claim_spec(template: ClaimTemplate) -> Obj:
    return {"resourceClassName": template.resource_class, "allocationMode": "WaitForFirstConsumer"}


def _device_claim_spec(template: ClaimTemplate) -> Obj:
    request = {"name": "req-0", "exactly": {"deviceClassName": template.resource_class}}
    return {"devices": {"requests": [request]}}


_CLAIM_SPECS: dict[versions.Dra, Callable[[ClaimTemplate], Obj]] = {
    versions.Dra.CLASSIC: _classic_claim_spec,
    versions.Dra.STRUCTURED: _device_claim_spec,
}


def pod(wl: Workload, *, name: str, phase: str, namespace: str = NAMESPACE) -> Obj:
    """One pause container requesting nothing but the workload's claims (in the shape of the
    workload's mode: core/v1 since 1.31 for structured parameters, `source` for 1.28)."""
    pod_claims = [
        pod_resource_claim(claim, template_name=t.name, mode=wl.mode)
        for t in wl.templates
        for claim in t.pod_claims
    ]
    container: Obj = {"name": "pause", "image": PAUSE_IMAGE}
    spec: Obj = {"containers": [container]}
    if pod_claims:
        container["resources"] = {"claims": [{"name": c["name"]} for c in pod_claims]}
        spec["resourceClaims"] = pod_claims
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {PHASE_LABEL: phase}},
        "spec": spec,
    }


def pod_names(phase: str, count: int) -> list[str]:
    return [f"{phase}-{i:05d}" for i in range(count)]


def bench_mode(name: str, flag: versions.Mode | None) -> versions.Mode:
    """The mode workload `name` runs in: `flag` when the workload runs in it, else its own
    (1.28 for classic-*, 1.36 for the others); ValueError naming the modes it runs in."""
    modes = _modes(name)
    if flag is None:
        return modes[0]
    if flag not in modes:
        raise ValueError(
            f"--kubernetes-version {flag}: workload {name} measures {modes[0].dra.value} and "
            f"runs only in {modes[0]} (give --kubernetes-version {modes[0]}, or leave it out)"
        )
    return flag


def _modes(name: str) -> tuple[versions.Mode, ...]:
    """The modes workload `name` runs in, its default first."""
    for prefix, mode in _ONLY_IN.items():
        if name.startswith(prefix):
            return (mode,)
    found = WORKLOADS.get(name)
    if found is not None and found.mode is not versions.CLASSIC:
        return (found.mode,)  # a shape written for 1.36 has no 1.28 form
    return (versions.STRUCTURED, versions.CLASSIC)


_ONLY_IN = {"classic-": versions.CLASSIC, "structured-": versions.STRUCTURED}
"""Workloads named with these prefixes measure one mode's DRA."""


def in_fleet(wl: Workload, fleet: Fleet) -> Workload:
    """`wl` on the nodes of `fleet`: every claim asks one device of the fleet's first
    DeviceClass; ValueError for a shape the fleet cannot run (1.28, a fill of allocated claims
    counted from the example driver's devices, a fleet without classes)."""
    if wl.mode.dra is not versions.Dra.STRUCTURED:
        raise ValueError(f"--fleet: workload {wl.name} runs in {wl.mode}; fleets need 1.36")
    if wl.fill:
        raise ValueError(f"--fleet: workload {wl.name} pre-allocates example-driver devices")
    if wl.templates and not fleet.device_classes:
        raise ValueError(f"--fleet: fleet {fleet.name} has no DeviceClass for the claims")
    classes = [str(c["metadata"]["name"]) for c in fleet.device_classes]
    templates = tuple(replace(t, resource_class=classes[0]) for t in wl.templates)
    return replace(wl, templates=templates, fleet=fleet)


def in_mode(wl: Workload, mode: versions.Mode) -> Workload:
    """`wl` as it runs in `mode`: a classic shape in 1.36 requests one device of the example
    DeviceClass per claim, allocated by the scheduler (one attempt per pod). A 1.36 shape
    stays as it is."""
    if wl.mode is mode or mode is versions.CLASSIC:
        return wl
    templates = tuple(replace(t, resource_class=DEVICE_CLASS_NAME) for t in wl.templates)
    return replace(wl, templates=templates, attempts_floor=1.0, mode=mode)
