"""The workload shapes mirror scheduler_perf and `small` keeps their ratios."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api import versions
from draplane.bench.workloads import (
    NAMESPACE,
    PHASE_LABEL,
    bench_mode,
    in_mode,
    pod,
    pod_names,
    workload,
)
from draplane.drivers.example import DEVICE_CLASS_NAME


@dataclass(frozen=True)
class Shape:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    devices_per_node: tuple[int, ...]
    claims_per_pod: int
    floor: float


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(Shape("classic-template", 100, 1000, 1000, (20,), 1, 2.0), id="template"),
        pytest.param(
            Shape("classic-multi-claim", 100, 1000, 1000, (40, 40), 4, 3.0), id="multi-claim"
        ),
        pytest.param(Shape("basic", 500, 500, 1000, (), 0, 1.0), id="basic"),
        pytest.param(
            Shape("structured-template", 500, 2500, 2500, (10,), 1, 1.0), id="structured-template"
        ),
    ],
)
def test_full_and_small_shapes(shape: Shape) -> None:
    full = workload(shape.name, "full")
    small = workload(shape.name, "small")

    assert (full.nodes, full.init_pods, full.measured_pods) == (
        shape.nodes, shape.init_pods, shape.measured_pods,
    )  # fmt: skip
    assert (small.nodes, small.init_pods, small.measured_pods) == (
        shape.nodes // 10, shape.init_pods // 10, shape.measured_pods // 10,
    )  # fmt: skip
    assert tuple(d.devices_per_node for d in small.drivers) == shape.devices_per_node
    assert full.claims_per_pod == shape.claims_per_pod
    assert full.attempts_floor == shape.floor


@pytest.mark.parametrize(
    "name",
    [pytest.param("classic-template", id="template"),
     pytest.param("classic-multi-claim", id="multi-claim")],
)  # fmt: skip
def test_dra_workloads_fill_the_cluster_exactly(name: str) -> None:
    for scale in ("small", "full"):
        wl = workload(name, scale)
        for driver in wl.drivers:
            claims = sum(
                len(t.pod_claims) for t in wl.templates if t.resource_class == driver.resource_class
            )
            assert wl.nodes * driver.devices_per_node == (wl.init_pods + wl.measured_pods) * claims


def test_multi_claim_pod_has_two_claims_from_each_template() -> None:
    wl = workload("classic-multi-claim", "small")

    obj = pod(wl, name="measured-00001", phase="measured")

    assert obj["metadata"] == {
        "name": "measured-00001",
        "namespace": NAMESPACE,
        "labels": {PHASE_LABEL: "measured"},
    }
    sources = [c["source"]["resourceClaimTemplateName"] for c in obj["spec"]["resourceClaims"]]
    assert sources == ["test-claim-template"] * 2 + ["another-test-claim-template"] * 2
    container = obj["spec"]["containers"][0]
    assert [c["name"] for c in container["resources"]["claims"]] == [
        "resource-1a", "resource-1b", "resource-2a", "resource-2b",
    ]  # fmt: skip
    assert {d.resource_class for d in wl.drivers} == {"example", "example2"}


def test_basic_pod_is_one_pause_container_without_claims() -> None:
    obj = pod(workload("basic", "full"), name="init-00000", phase="init")

    assert obj["spec"] == {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9"}]}


def test_pod_names_are_unique_and_ordered() -> None:
    names = pod_names("init", 3)

    assert names == ["init-00000", "init-00001", "init-00002"]


@pytest.mark.parametrize(
    ("name", "scale"),
    [pytest.param("structured", "full", id="unknown-workload"),
     pytest.param("basic", "huge", id="unknown-scale")],
)  # fmt: skip
def test_unknown_workload_or_scale_is_a_value_error(name: str, scale: str) -> None:
    with pytest.raises(ValueError, match="unknown"):
        workload(name, scale)


@pytest.mark.parametrize(
    ("name", "flag", "expected"),
    [
        pytest.param("classic-template", None, versions.CLASSIC, id="classic-defaults-to-1.28"),
        pytest.param("classic-multi-claim", versions.CLASSIC, versions.CLASSIC, id="classic-1.28"),
        pytest.param("structured-template", None, versions.STRUCTURED, id="structured-1.36"),
        pytest.param("basic", None, versions.STRUCTURED, id="basic-defaults-to-1.36"),
        pytest.param("basic", versions.CLASSIC, versions.CLASSIC, id="basic-1.28"),
        pytest.param("lifecycle", None, versions.STRUCTURED, id="lifecycle-defaults-to-1.36"),
        pytest.param("claim-controller", versions.CLASSIC, versions.CLASSIC, id="suite-1.28"),
    ],
)
def test_each_workload_runs_in_its_mode(
    name: str, flag: versions.Mode | None, expected: versions.Mode
) -> None:
    assert bench_mode(name, flag) is expected


def test_a_classic_shape_in_1_36_requests_the_example_device_class() -> None:
    shape = in_mode(workload("classic-template", "small"), versions.STRUCTURED)

    built = pod(shape, name="p", phase="measured")

    assert shape.mode is versions.STRUCTURED
    assert shape.attempts_floor == 1.0
    assert [t.resource_class for t in shape.templates] == [DEVICE_CLASS_NAME]
    assert [c["name"] for c in built["spec"]["resourceClaims"]] == ["resource"]


@pytest.mark.parametrize(
    ("name", "full_claims", "small_claims"),
    [
        pytest.param("structured-steady", 0, 0, id="empty"),
        pytest.param("structured-steady-half", 2500, 250, id="half"),
        pytest.param("structured-steady-full", 4990, 490, id="full"),
    ],
)
def test_steady_state_shapes(name: str, full_claims: int, small_claims: int) -> None:
    full, small = workload(name, "full"), workload(name, "small")
    assert (full.nodes, full.steady_pods, full.steady_seconds) == (500, 10, 10.0)
    assert (small.nodes, small.steady_pods, small.steady_seconds) == (50, 10, 2.0)
    assert (full.init_pods, small.init_pods) == (0, 0)
    assert (full.allocated_claims, small.allocated_claims) == (full_claims, small_claims)
