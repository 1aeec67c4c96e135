"""`draplane bench --fleet`: a scheduling workload runs on the fleet's nodes with its claims
asking the fleet's first DeviceClass; shapes a fleet cannot run are refused up front."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.bench.session import BenchOptions
from draplane.cli.bench import _resolved
from draplane.cli.main import build_parser
from draplane.fleets import load_fleet


def test_scheduling_workload_on_a_fleet() -> None:
    wl = BenchOptions(workload="structured-template", fleet=load_fleet("nvidia-gpu")).resolve()
    assert wl.fleet is not None and wl.fleet.name == "nvidia-gpu"
    assert [t.resource_class for t in wl.templates] == ["gpu.nvidia.com"]


@dataclass(frozen=True)
class Refused:
    argv: tuple[str, ...]
    message: str


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            Refused(("structured-steady-half",), "pre-allocates example-driver devices"),
            id="fill",
        ),
        pytest.param(Refused(("classic-template",), "fleets need 1.36"), id="classic"),
        pytest.param(
            Refused(("lifecycle",), "--fleet is for the scheduling workloads"), id="suite"
        ),
    ],
)
def test_refused_shapes(case: Refused) -> None:
    args = build_parser().parse_args(["bench", *case.argv, "--fleet", "example-driver"])
    with pytest.raises(ValueError, match=case.message):
        _resolved(args)
