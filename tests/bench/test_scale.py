"""Scale options and workloads at a tiny size: `--nodes` / `--pods` for basic and lifecycle,
`density` (every pod Running, the /readyz probe's figures), a node sweep (growth.json and
growth.png), `object-memory` (bytes per stored and cached object). result.json well formed and
plausible; no timing assertions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from draplane.bench.density import gc_generations
from draplane.bench.processrun import ParsedFamilies
from draplane.bench.runner import Timeouts
from draplane.bench.scale import lease_figures
from draplane.bench.session import BenchOptions, run_bench
from draplane.bench.suitesession import SuiteOptions, run_suite
from draplane.bench.sweep import SweepOptions, parse_counts, run_sweep
from draplane.bench.workloads import workload
from draplane.cli.main import main
from draplane.scheduler.algorithm import num_feasible_nodes_to_find

TIMEOUTS = Timeouts(base=30.0, stall=30.0, stall_per_pod=0.0, settle=10.0)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def _written(output: Path) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = orjson.loads((output / "result.json").read_bytes())
    return runs


@pytest.mark.slow
async def test_basic_takes_nodes_and_pods(tmp_path: Path) -> None:
    options = BenchOptions(
        workload="basic", scale="small", hints="on", store="memory", output=tmp_path,
        nodes=7, pods=15, timeouts=TIMEOUTS,
    )  # fmt: skip

    await run_bench(options)

    [figures] = _written(tmp_path)
    assert (figures["nodes"], figures["measured_pods"]) == (7, 15)
    assert figures["scheduled_pods"] == 15
    assert figures["init_pods"] == workload("basic", "small").init_pods
    assert figures["nodes_to_find"] == 7
    assert figures["algorithm_cpu_ms_per_attempt"] > 0
    assert figures["algorithm_us_per_node_examined"] > 0


@pytest.mark.slow
async def test_lifecycle_takes_nodes_and_pods(tmp_path: Path) -> None:
    options = SuiteOptions(
        workload="lifecycle", scale="small", store="memory", output=tmp_path, nodes=3, pods=12
    )

    await run_suite(options)

    [figures] = _written(tmp_path)
    assert (figures["nodes"], figures["pods"]) == (3, 12)
    assert figures["running_pods"] == 12


@pytest.mark.slow
async def test_density_runs_every_pod_and_probes_readyz(tmp_path: Path) -> None:
    options = SuiteOptions(
        workload="density", scale="small", store="memory", output=tmp_path, nodes=20, pods=60
    )

    await run_suite(options)

    [figures] = _written(tmp_path)
    assert (figures["workload"], figures["nodes"], figures["pods"]) == ("density", 20, 60)
    assert figures["running_pods"] == figures["bound_pods"] == 60
    assert figures["attempts_per_pod"] == 1.0
    assert figures["nodes_to_find"] == 20
    assert figures["readyz_probes"] >= 1
    assert figures["readyz_failures"] == 0
    assert 0 < figures["readyz_p50_ms"] <= figures["readyz_p99_ms"] <= figures["readyz_max_ms"]
    assert figures["peak_rss_mib"] >= figures["rss_before_pods_mib"] > 0
    assert figures["writes_by_resource_verb"]["create pods"] == 1.0
    assert figures["lease_renewals_expected_per_s"] == 2.0
    assert figures["lease_renewals_per_s"] >= 0.0


@pytest.mark.slow
async def test_density_with_processes_counts_every_process(tmp_path: Path) -> None:
    options = SuiteOptions(
        workload="density", scale="small", store="memory", output=tmp_path, nodes=20, pods=60,
        processes=True,
    )  # fmt: skip

    await run_suite(options)

    [figures] = _written(tmp_path)
    assert (figures["processes"], figures["transport"]) == (True, "http")
    assert figures["running_pods"] == figures["bound_pods"] == 60
    assert figures["attempts_per_pod"] == 1.0
    assert figures["nodes_to_find"] == 20
    assert figures["readyz_failures"] == 0
    assert 0 < figures["readyz_p50_ms"] <= figures["readyz_p99_ms"] <= figures["readyz_max_ms"]
    components = {"apiserver", "controller-manager", "scheduler", "nodes"}
    assert set(figures["process_cpu_s"]) == components | {"bench"}
    assert all(figures["process_peak_rss_mib"][name] > 0 for name in components)
    assert set(figures["process_gc_ms"]) == components
    assert set(figures["process_gc_generations"]) == components
    assert set(figures["process_loop_lag_p99_ms"]) == components
    for name in components:  # every process probed its loop during the run
        assert (
            0
            <= figures["process_loop_lag_mean_ms"][name]
            <= figures["process_loop_lag_p99_ms"][name]
        )
    for generations in figures["process_gc_generations"].values():
        assert set(generations) <= {"gen0", "gen1", "gen2"}
    assert figures["cpu_s"] == pytest.approx(sum(figures["process_cpu_s"].values()), abs=0.01)
    # The pod's create and its binding (apiserver_request_total has no subresource label).
    assert figures["writes_by_resource_verb"]["create pods"] == 2.0
    assert figures["writes_by_resource_verb"]["update pods"] >= 1.0
    assert figures["lease_renewals_expected_per_s"] == 2.0
    assert figures["server_write_mean_ms"] > 0
    assert 0 < figures["server_write_p50_ms"] <= figures["server_write_p99_ms"]


@pytest.mark.slow
async def test_node_sweep_writes_the_growth_curve(tmp_path: Path) -> None:
    base = workload("basic", "small").shrunk(5)
    options = SweepOptions(workload=base, nodes=(2, 120), output=tmp_path, timeouts=TIMEOUTS)

    curve = await run_sweep(options)

    assert [p["nodes"] for p in curve] == [2, 120]
    assert [p["nodes_to_find"] for p in curve] == [2, num_feasible_nodes_to_find(120)]
    assert all(p["measured_pods"] == base.measured_pods for p in curve)
    assert all(p["algorithm_cpu_ms_per_attempt"] > 0 for p in curve)
    assert orjson.loads((tmp_path / "growth.json").read_bytes()) == curve
    assert [r["nodes"] for r in _written(tmp_path)] == [2, 120]
    assert (tmp_path / "growth.png").stat().st_size > 0


@pytest.mark.slow
async def test_object_memory_measures_stored_and_cached_bytes(tmp_path: Path) -> None:
    options = SuiteOptions(workload="object-memory", scale="small", output=tmp_path, pods=200)

    await run_suite(options)

    [figures] = _written(tmp_path)
    assert figures["objects_per_kind"] == 200
    for kind in ("pod", "node", "claim"):
        stored = figures[f"stored_bytes_per_{kind}"]
        # An informer in the process shares the API server's decoded objects.
        assert stored > 500
        assert figures[f"informer_bytes_per_{kind}"] < stored


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("100,500,1000", (100, 500, 1000), id="three"),
        pytest.param("5000", (5000,), id="one"),
        pytest.param(" 10, 20 ,", (10, 20), id="spaces-trailing-comma"),
    ],
)
def test_parse_counts(text: str, expected: tuple[int, ...]) -> None:
    assert parse_counts(text) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["basic", "--sweep-nodes", "10,x"], "comma-separated", id="not-a-number"),
        pytest.param(["basic", "--sweep-nodes", "0,10"], "at least 1", id="zero-nodes"),
        pytest.param(
            ["basic", "--sweep-nodes", "10", "--nodes", "5"], "one of them", id="sweep-and-nodes"
        ),
        pytest.param(
            ["basic", "--sweep-nodes", "10", "--hints", "compare"], "hints on", id="compare"
        ),
        pytest.param(["api-create", "--sweep-nodes", "10"], "scheduling workloads", id="suite"),
        pytest.param(["api-create", "--nodes", "10"], "not for api-create", id="nodes-api"),
        pytest.param(["basic", "--nodes", "0"], "at least 1", id="zero"),
        pytest.param(["density", "--pods", "0"], "at least 1", id="zero-pods"),
        pytest.param(["api-create", "--processes"], "not api-create", id="processes-api"),
    ],
)
def test_bad_scale_options_exit_2_without_running(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", *args, "--output", str(tmp_path / "out")])

    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("per_pod", "pods", "duration", "nodes", "rate", "expected"),
    [
        pytest.param(0.5, 100, 10.0, 50, 5.0, 5.0, id="every-node-on-time"),
        pytest.param(0.1, 100, 10.0, 50, 1.0, 5.0, id="renewals-waited"),
        pytest.param(0.0, 100, 0.0, 5000, 0.0, 500.0, id="no-duration"),
    ],
)
def test_lease_figures_compare_renewals_with_the_nodes_period(
    per_pod: float, pods: int, duration: float, nodes: int, rate: float, expected: float
) -> None:
    figures = {
        "writes_by_resource_verb": {"update leases": per_pod},
        "pods": pods,
        "duration_s": duration,
    }

    assert lease_figures(figures, nodes=nodes) == {
        "lease_renewals_per_s": rate,
        "lease_renewals_expected_per_s": expected,
    }


def _gc_registry(buckets: dict[str, list[float]]) -> CollectorRegistry:
    """A registry holding draplane_gc_pause_seconds with cumulative `buckets` per generation
    over the bounds 0.01, 0.1, 1 and +Inf."""
    lines = ["# TYPE draplane_gc_pause_seconds histogram"]
    for generation, counts in buckets.items():
        for le, n in zip(("0.01", "0.1", "1.0", "+Inf"), counts, strict=True):
            lines.append(
                f'draplane_gc_pause_seconds_bucket{{generation="{generation}",le="{le}"}} {n}'
            )
        lines.append(f'draplane_gc_pause_seconds_count{{generation="{generation}"}} {counts[-1]}')
        lines.append(f'draplane_gc_pause_seconds_sum{{generation="{generation}"}} 0.0')
    registry = CollectorRegistry(auto_describe=False)
    families = list(text_string_to_metric_families("\n".join(lines) + "\n"))
    registry.register(ParsedFamilies(families))
    return registry


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        pytest.param(
            {"0": [5, 5, 5, 5]},
            {"0": [9, 9, 9, 9]},
            {"gen0": {"collections": 4, "longest_at_most_ms": 10.0}},
            id="all-short",
        ),
        pytest.param(
            {"1": [1, 2, 2, 2]},
            {"1": [2, 3, 4, 4]},
            {"gen1": {"collections": 2, "longest_at_most_ms": 1000.0}},
            id="one-long",
        ),
        pytest.param(
            {"2": [0, 0, 0, 0]},
            {"2": [0, 0, 0, 1]},
            {"gen2": {"collections": 1, "longest_at_most_ms": None}},
            id="beyond-buckets",
        ),
        pytest.param(
            {"0": [3, 3, 3, 3]},
            {"0": [3, 3, 3, 3]},
            {"gen0": {"collections": 0, "longest_at_most_ms": None}},
            id="none",
        ),
    ],
)
def test_gc_generations_bound_the_longest_pause_between_scrapes(
    before: dict[str, list[float]], after: dict[str, list[float]], expected: dict[str, Any]
) -> None:
    assert gc_generations(_gc_registry(before), _gc_registry(after)) == expected
