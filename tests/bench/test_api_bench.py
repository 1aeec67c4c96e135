"""The API and component benchmarks (api-create, api-watch, claim-controller, lifecycle) at a
tiny size, in both modes (1.36, the default, and 1.28): result.json is well formed and plausible
(every object created, every watcher saw every event, every pod recorded or Running); the
histogram quantile and the summary targets. No timing assertions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from draplane.api import versions
from draplane.bench.runner import Timeouts
from draplane.bench.session import BenchOptions, run_bench
from draplane.bench.suite import Row
from draplane.bench.suitesession import SuiteOptions, run_suite
from draplane.bench.workloads import workload
from draplane.cli.main import main

pytestmark = pytest.mark.slow

CONDITIONS = {"workload", "scale", "store", "transport", "python", "cores", "commit", "run"}
MODES = [pytest.param(versions.STRUCTURED, id="1.36"), pytest.param(versions.CLASSIC, id="1.28")]


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    # The command installs its own root handler, as every draplane command does.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


async def _run(
    name: str, output: Path, *, shrink: int, store: str = "sqlite",
    mode: versions.Mode | None = None,
) -> dict[str, Any]:  # fmt: skip
    options = SuiteOptions(
        workload=name, scale="small", store=store, output=output, shrink=shrink,
        kubernetes_version=mode,
    )  # fmt: skip
    medians = await run_suite(options)
    written = orjson.loads((output / "result.json").read_bytes())
    assert len(written) == 1
    figures: dict[str, Any] = written[0]
    assert set(figures) >= CONDITIONS
    assert (figures["workload"], figures["scale"], figures["store"]) == (name, "small", store)
    assert figures["kubernetes_version"] == str(mode or versions.STRUCTURED)
    summary = orjson.loads((output / "summary.json").read_bytes())
    assert summary["medians"] == medians
    return figures


async def test_api_create_creates_every_object_over_both_transports(tmp_path: Path) -> None:
    figures = await _run("api-create", tmp_path, shrink=10, mode=versions.CLASSIC)

    assert figures["transport"] == "local,http"
    assert figures["objects_per_mode"] == 50
    # Four in-process modes with 100 warm-up creates each, the client process warms up with 100.
    assert figures["created_objects"] == figures["expected_objects"] == 5 * (50 + 100)
    assert 2048 <= figures["object_bytes"] < 3072
    labels = ("local_sequential", "local_concurrent", "http_sequential", "http_concurrent")
    for label in (*labels, "http_process"):
        assert figures[f"creates_per_s_{label}"] > 0
        assert (
            figures[f"create_latency_p99_ms_{label}"] >= figures[f"create_latency_p50_ms_{label}"]
        )


@pytest.mark.parametrize("mode", MODES)
async def test_api_watch_every_watcher_sees_every_event(
    tmp_path: Path, mode: versions.Mode
) -> None:
    figures = await _run("api-watch", tmp_path, shrink=5, mode=mode)

    assert (figures["watchers"], figures["events"]) == (2, 10)
    for transport in ("local", "http"):
        assert figures[f"deliveries_{transport}"] == 20
        assert figures[f"expected_deliveries_{transport}"] == 20
        p50, p99 = (figures[f"watch_delay_from_call_p{q}_ms_{transport}"] for q in (50, 99))
        assert 0 < p50 <= p99 <= figures[f"watch_delay_from_call_max_ms_{transport}"]
        assert 0 <= figures[f"early_deliveries_{transport}"] <= 20


@pytest.mark.parametrize("mode", MODES)
async def test_claim_controller_records_one_claim_per_pod_in_two_writes(
    tmp_path: Path, mode: versions.Mode
) -> None:
    figures = await _run("claim-controller", tmp_path, shrink=10, mode=mode)

    assert figures["pods"] == figures["recorded_pods"] == figures["claims"] == 20
    assert figures["writes_by_resource_verb"] == {
        "create resourceclaims": 1.0,
        "patch pods/status": 1.0,
    }
    assert figures["writes_per_pod"] == 2.0
    assert figures["conflicts"] == 0
    assert figures["pods_per_s"] > 0


@pytest.mark.parametrize(
    ("mode", "attempts_floor"),
    [
        # The scheduler allocates from the nodes' ResourceSlices: one attempt.
        pytest.param(versions.STRUCTURED, 1.0, id="1.36"),
        # The first attempt waits for the driver's allocation (PodSchedulingContext).
        pytest.param(versions.CLASSIC, 2.0, id="1.28"),
    ],
)
async def test_lifecycle_runs_every_pod(
    tmp_path: Path, mode: versions.Mode, attempts_floor: float
) -> None:
    figures = await _run("lifecycle", tmp_path, shrink=5, store="memory", mode=mode)

    assert (figures["nodes"], figures["pods"]) == (2, 20)
    assert figures["running_pods"] == figures["bound_pods"] == 20
    assert 0 < figures["latency_bound_p50_s"] <= figures["latency_running_p50_s"]
    assert figures["latency_running_p50_s"] <= figures["latency_running_p99_s"]
    assert figures["latency_running_p99_s"] <= figures["latency_running_max_s"]
    assert figures["attempts_per_pod"] >= attempts_floor
    assert figures["writes_per_pod"] > 0
    contexts = {k for k in figures["writes_by_resource_verb"] if "podschedulingcontexts" in k}
    assert bool(contexts) is not mode.structured


@pytest.mark.parametrize("mode", MODES)
async def test_deployment_runs_every_replica(tmp_path: Path, mode: versions.Mode) -> None:
    figures = await _run("deployment", tmp_path, shrink=5, store="memory", mode=mode)

    assert (figures["nodes"], figures["pods"]) == (2, 20)
    assert figures["running_pods"] == figures["bound_pods"] == 20
    assert figures["latency_running_p50_s"] <= figures["latency_running_p99_s"]
    writes = figures["writes_by_resource_verb"]
    assert writes["create pods"] == writes["create resourceclaims"] == 1.0
    assert writes["create replicasets"] == writes["create deployments"] == 0.05


async def test_basic_reports_the_attempt_duration(tmp_path: Path) -> None:
    options = BenchOptions(
        workload="basic", scale="small", hints="on", store="memory", output=tmp_path,
        shape=workload("basic", "small").shrunk(5),
        timeouts=Timeouts(base=30.0, stall=30.0, stall_per_pod=0.0, settle=10.0),
    )  # fmt: skip

    outcome = await run_bench(options)

    figures = outcome.medians["hints on"]
    assert figures["kubernetes_version"] == "1.36"
    assert figures["scheduled_pods"] == figures["measured_pods"] == 20
    assert 0 < figures["attempt_duration_p50_ms"] <= figures["attempt_duration_p99_ms"]
    assert figures["attempt_duration_mean_ms"] > 0


def test_cli_prints_targets_and_writes_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "api-create", "--scale", "small", "--shrink", "10", "--transport", "local"]

    code = main([*args, "--store", "memory", "--output", str(tmp_path)])

    assert code == 0
    assert {p.name for p in tmp_path.iterdir()} == {"result.json", "summary.json"}
    written = orjson.loads((tmp_path / "result.json").read_bytes())
    assert (written[0]["transport"], written[0]["kubernetes_version"]) == ("local", "1.36")
    assert written[0]["created_objects"] == written[0]["expected_objects"] == 2 * (50 + 100)
    assert "creates_per_s_http_sequential" not in written[0]
    out = capsys.readouterr().out
    assert "creates/s local, 50 writers" in out
    assert ">= 3000" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(["--hints", "compare"], "--hints compare", id="compare-hints"),
        pytest.param(["--runs", "0"], "at least 1", id="no-runs"),
        pytest.param(["--store", "sqlite:///x.db", "--runs", "2"], "one run", id="url-two-runs"),
    ],
)
def test_bad_suite_options_exit_2_without_running(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "lifecycle", "--output", str(tmp_path / "out"), *extra])

    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("row", "value", "expected"),
    [
        pytest.param(Row("k", "k", at_least=3000), 3100.0, True, id="at-least-met"),
        pytest.param(Row("k", "k", at_least=3000), 2999.0, False, id="at-least-missed"),
        pytest.param(Row("k", "k", at_most=50), 50.0, True, id="at-most-met"),
        pytest.param(Row("k", "k", at_most=50), 51.0, False, id="at-most-missed"),
        pytest.param(Row("k", "k"), 1.0, None, id="no-target"),
        pytest.param(Row("k", "k", at_most=50), None, None, id="missing-value"),
    ],
)
def test_row_target(row: Row, value: float | None, expected: bool | None) -> None:
    assert row.met(value) is expected
