"""`--scale small` runs of every workload through the real ControlPlane (memory store), shrunk
further so that the whole file stays quick: every measured pod is scheduled, result.json is well
formed, and attempts per pod sit at the floor with hints on and above it with hints and
PreEnqueue off. No timing assertions.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from draplane.api import versions
from draplane.bench.result import RESULT_KEYS
from draplane.bench.runner import Timeouts
from draplane.bench.session import BenchOptions, HintsMode, run_bench
from draplane.bench.workloads import workload

pytestmark = pytest.mark.slow

# Seconds; generous, they only bound a broken control plane.
TEST_TIMEOUTS = Timeouts(base=30.0, per_pod=1.0, stall=30.0, stall_per_pod=0.0, settle=10.0)
SHRINK = 5
"""Hints on: small / 5 keeps several nodes. Hints off waits out backoffs, so it runs one node."""
SHRINK_OFF = 10

KEY_TYPES: dict[str, type | tuple[type, ...]] = {
    "workload": str, "scale": str, "hints": str, "store": str, "transport": str, "nodes": int,
    "measured_pods": int, "scheduled_pods": int, "attempts_by_result": dict,
    "writes_by_resource_verb": dict, "conflicts": int, "python": str, "cores": int,
}  # fmt: skip


def _check_well_formed(figures: dict[str, Any]) -> None:
    assert set(RESULT_KEYS) <= set(figures)
    for key in RESULT_KEYS:
        assert isinstance(figures[key], KEY_TYPES.get(key, (int, float))), key
    assert set(figures["attempts_by_result"]) >= {"scheduled", "unschedulable", "error"}


def _options(
    name: str, *, hints: HintsMode, output: Path, shrink: int, mode: versions.Mode | None = None
) -> BenchOptions:
    return BenchOptions(
        workload=name, scale="small", hints=hints, pre_enqueue=hints != "off", store="memory",
        output=output, shape=workload(name, "small").shrunk(shrink), timeouts=TEST_TIMEOUTS,
        kubernetes_version=mode,
    )  # fmt: skip


def _only_run(output: Path) -> dict[str, Any]:
    written = orjson.loads((output / "result.json").read_bytes())
    assert len(written) == 1
    figures: dict[str, Any] = written[0]
    _check_well_formed(figures)
    assert figures["scheduled_pods"] == figures["measured_pods"]
    assert (output / "report.png").stat().st_size > 0
    return figures


@pytest.mark.parametrize(
    ("name", "mode", "floor", "served"),
    [
        pytest.param("basic", None, 1.0, "1.36", id="basic"),
        pytest.param("basic", versions.CLASSIC, 1.0, "1.28", id="basic-1.28"),
        pytest.param("classic-template", None, 2.0, "1.28", id="template"),
        pytest.param("classic-multi-claim", None, 3.0, "1.28", id="multi-claim"),
        pytest.param("structured-template", None, 1.0, "1.36", id="structured-template"),
    ],
)
async def test_hints_on_schedules_every_pod_at_the_attempts_floor(
    name: str, mode: versions.Mode | None, floor: float, served: str, tmp_path: Path
) -> None:
    options = _options(name, hints="on", output=tmp_path, shrink=SHRINK, mode=mode)

    outcome = await run_bench(options)

    figures = _only_run(tmp_path)
    assert figures["kubernetes_version"] == served
    assert figures["measured_pods"] == workload(name, "small").shrunk(SHRINK).measured_pods
    assert figures["hints"] == "on"
    assert outcome.medians["hints on"]["attempts_per_pod"] == figures["attempts_per_pod"]
    assert figures["attempts_per_pod"] == floor


async def test_hints_and_pre_enqueue_off_cost_more_attempts(tmp_path: Path) -> None:
    # Both runs wait out scheduler backoffs rather than use the CPU: run them side by side.
    names = ("classic-template", "classic-multi-claim")
    await asyncio.gather(
        *(
            run_bench(_options(n, hints="off", output=tmp_path / n, shrink=SHRINK_OFF))
            for n in names
        )
    )

    template, multi_claim = (_only_run(tmp_path / n) for n in names)
    assert (template["hints"], template["pre_enqueue"]) == ("off", "off")
    assert template["attempts_per_pod"] > 2.0
    assert multi_claim["attempts_per_pod"] > 3.0


async def test_compare_runs_both_modes_and_reports_ratios(tmp_path: Path) -> None:
    options = BenchOptions(
        workload="basic", scale="small", hints="compare", store="memory", output=tmp_path,
        shape=workload("basic", "small").shrunk(SHRINK), timeouts=TEST_TIMEOUTS,
    )  # fmt: skip

    outcome = await run_bench(options)

    written = orjson.loads((tmp_path / "result.json").read_bytes())
    assert [r["hints"] for r in written] == ["on", "off"]
    summary = orjson.loads((tmp_path / "summary.json").read_bytes())
    assert set(summary["medians"]) == {"hints on", "hints off"}
    assert outcome.ratios is not None
    assert summary["ratios_on_off"]["attempts_per_pod"] == outcome.ratios["attempts_per_pod"] == 1.0


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param({"runs": 0}, "at least 1", id="no-runs"),
        pytest.param({"store": "sqlite:///x.db", "runs": 2}, "one run", id="url-store-twice"),
        pytest.param({"workload": "nope"}, "unknown workload", id="unknown-workload"),
        pytest.param(
            {"workload": "classic-template", "kubernetes_version": versions.STRUCTURED},
            r"classic-template measures classic DRA and runs only in 1\.28",
            id="classic-in-1.36",
        ),
        pytest.param(
            {"workload": "structured-template", "kubernetes_version": versions.CLASSIC},
            r"structured parameters and runs only in 1\.36",
            id="structured-in-1.28",
        ),
    ],
)
async def test_bad_options_are_value_errors(
    overrides: dict[str, Any], message: str, tmp_path: Path
) -> None:
    options = BenchOptions(**{"workload": "basic", "hints": "on", "output": tmp_path, **overrides})

    with pytest.raises(ValueError, match=message):
        await run_bench(options)

    assert not (tmp_path / "result.json").exists()


async def test_steady_state_reuses_the_freed_devices(tmp_path: Path) -> None:
    # "full": every device but one per steady pod is allocated beforehand, so scheduling more
    # pods than that needs the devices of deleted pods back.
    name = "structured-steady-full"
    shape = workload(name, "small").shrunk(SHRINK)

    await run_bench(_options(name, hints="on", output=tmp_path, shrink=SHRINK))

    figures = _only_run(tmp_path)
    assert figures["allocated_claims"] == shape.allocated_claims == shape.nodes * 10 - 10
    assert figures["steady_pods"] == shape.steady_pods == 10
    assert figures["duration_s"] >= shape.steady_seconds
    assert figures["scheduled_pods"] > shape.steady_pods
    assert figures["created_pods"] >= figures["scheduled_pods"]
    assert figures["attempts_by_result"]["error"] == 0
