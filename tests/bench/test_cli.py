"""`draplane bench` from the command line: exit codes, output files, summary on stdout."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from draplane.cli.main import main


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    # The command installs its own root handler, as every draplane command does.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.slow
def test_small_basic_run_writes_results_and_prints_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "basic", "--scale", "small", "--shrink", "5", "--hints", "on"]
    args += ["--store", "memory", "--output", str(tmp_path)]

    code = main(args)

    assert code == 0
    written = orjson.loads((tmp_path / "result.json").read_bytes())
    assert [(r["workload"], r["scale"], r["hints"]) for r in written] == [("basic", "small", "on")]
    assert {p.name for p in tmp_path.iterdir()} == {"result.json", "summary.json", "report.png"}
    out = capsys.readouterr()
    assert "throughput avg" in out.out
    assert "measured pods bound: 20/20" in out.err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(["--runs", "0"], "at least 1", id="no-runs"),
        pytest.param(["--store", "etcd://x", "--hints", "compare"], "one run", id="url-compare"),
    ],
)
def test_bad_options_exit_2_without_running(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "basic", "--output", str(tmp_path / "out"), *extra])

    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "version", "message"),
    [
        pytest.param("classic-template", "1.36", "runs only in 1.28", id="classic-in-1.36"),
        pytest.param("structured-template", "1.28", "runs only in 1.36", id="structured-in-1.28"),
    ],
)
def test_a_workload_refuses_the_other_mode(
    name: str, version: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["bench", name, "--kubernetes-version", version, "--output", str(out)])

    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
