"""The `draplane` command line: `--help` lists every command, and bad arguments or unusable
files end with a one-line `error:` message and a non-zero exit code, never a traceback.

Most cases run `main(argv)` in-process (a traceback would surface as the test's exception);
a few run the installed command to see exactly what a user sees.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from draplane.apiserver import authn, certs
from draplane.apiserver.kubeconfig import build_kubeconfig, write_kubeconfig
from draplane.cli.main import main
from draplane.storage._lock import StoreLock
from draplane.testing.commands import Commands

COMMANDS = ["apiserver", "kubeconfig", "controller-manager", "scheduler", "driver", "nodes", "up"]

UNKNOWN_PLUGIN = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter:
      enabled: [{name: NoSuchPlugin}]
"""


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    # Every command installs its own root handler.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `draplane ARGV`, argparse's exits included."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["--help"], capsys)
    assert code == 0
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("    ")}
    assert set(COMMANDS) <= listed


def test_driver_help_lists_the_example_driver(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["driver", "--help"], capsys)
    assert code == 0
    assert "example" in out


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """What `draplane apiserver` leaves in its data dir on first start (no server listening)."""
    path = tmp_path / "data"
    paths = certs.ensure_certs(path)
    authn.ensure_bootstrap_tokens(path)
    token = authn.ensure_user_token(path, "admin")
    config = build_kubeconfig(
        server="https://127.0.0.1:6443",
        ca_pem=paths.ca_cert.read_bytes(),
        user="admin",
        token=token,
    )
    write_kubeconfig(path / "kubeconfig", config)
    return path


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def files(tmp_path: Path, data_dir: Path, busy_port: int) -> dict[str, str]:
    """Paths the cases name: a usable kubeconfig, a bad scheduler config, an unparsable file,
    an empty dir; and a port in use."""
    (tmp_path / "unknown-plugin.yaml").write_text(UNKNOWN_PLUGIN)
    (tmp_path / "broken.yaml").write_text("profiles: [\n")
    (tmp_path / "empty").mkdir()
    return {
        "BUSY_PORT": str(busy_port),
        "KUBECONFIG": str(data_dir / "kubeconfig"),
        "UNKNOWN_PLUGIN": str(tmp_path / "unknown-plugin.yaml"),
        "BROKEN": str(tmp_path / "broken.yaml"),
        "EMPTY": str(tmp_path / "empty"),
        "MISSING": str(tmp_path / "missing"),
        "URL": "http://127.0.0.1:1",
    }


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        pytest.param(
            ["scheduler", "--kubeconfig", "MISSING", "--config", "MISSING"],
            1,
            "scheduler: error: invalid scheduler configuration: reading scheduler config",
            id="scheduler-config-missing",
        ),
        pytest.param(
            ["scheduler", "--kubeconfig", "KUBECONFIG", "--config", "UNKNOWN_PLUGIN"],
            1,
            'profiles[0].plugins.filter.enabled[0]: Not found: "NoSuchPlugin"',
            id="scheduler-config-unknown-plugin",
        ),
        pytest.param(
            ["scheduler", "--kubeconfig", "MISSING", "--config", "BROKEN"],
            1,
            "parsing scheduler config",
            id="scheduler-config-not-yaml",
        ),
        pytest.param(
            ["scheduler", "--kubeconfig", "MISSING"],
            1,
            "scheduler: error: cannot use kubeconfig",
            id="scheduler-kubeconfig-missing",
        ),
        pytest.param(
            ["controller-manager", "--kubeconfig", "BROKEN"],
            1,
            "controller-manager: error: cannot use kubeconfig",
            id="controller-manager-kubeconfig-not-yaml",
        ),
        pytest.param(
            ["scheduler", "--kubeconfig", "MISSING", "--queueing-hints", "maybe"],
            2,
            "must be on or off",
            id="scheduler-hints-not-on-or-off",
        ),
        pytest.param(
            [
                *("driver", "example", "--kubeconfig", "MISSING"),
                *("--devices-per-node", "2", "--network-attached", "3"),
            ],
            2,
            "argument --network-attached: not allowed with argument --devices-per-node",
            id="driver-modes-exclusive",
        ),
        pytest.param(
            ["driver", "example", "--kubeconfig", "MISSING", "--devices-per-node", "-1"],
            2,
            "must be 0 or more",
            id="driver-negative-devices",
        ),
        pytest.param(
            ["driver", "example", "--kubeconfig", "MISSING", "--recheck-delay", "0"],
            2,
            "must be more than 0 seconds, not 0",
            id="driver-recheck-delay-zero",
        ),
        pytest.param(
            ["driver", "example", "--kubeconfig", "MISSING", "--recheck-delay", "soon"],
            2,
            "not a number of seconds: 'soon'",
            id="driver-recheck-delay-not-a-number",
        ),
        pytest.param(["driver"], 2, "required: DRIVER", id="driver-without-driver"),
        pytest.param(
            ["nodes", "--kubeconfig", "MISSING", "--count", "1", "--run-seconds", "0"],
            2,
            "must be more than 0 seconds",
            id="nodes-run-seconds-zero",
        ),
        pytest.param(
            ["scheduler", "--kubeconfig", "MISSING", "--leader-elect-lease-duration", "soon"],
            2,
            "invalid duration 'soon'",
            id="scheduler-lease-duration-not-a-duration",
        ),
        pytest.param(
            ["controller-manager", "--kubeconfig", "MISSING", "--leader-elect=maybe"],
            2,
            "must be true or false",
            id="controller-manager-leader-elect-not-a-bool",
        ),
        pytest.param(
            ["scheduler", "--kubeconfig", "KUBECONFIG", "--leader-elect-renew-deadline", "20s"],
            1,
            "leader election needs leaseDuration > renewDeadline > 1.2 * retryPeriod > 0",
            id="scheduler-renew-deadline-past-lease-duration",
        ),
        pytest.param(
            ["apiserver", "--data-dir", "EMPTY", "--store", "bogus"],
            1,
            "apiserver: error: cannot open store 'bogus': unsupported store",
            id="apiserver-unknown-store",
        ),
        pytest.param(
            ["apiserver", "--data-dir", "EMPTY", "--store", "sqlite", "--etcd-servers", "URL"],
            1,
            "apiserver: error: --etcd-servers needs --store etcd (got --store sqlite)",
            id="apiserver-etcd-servers-with-sqlite",
        ),
        pytest.param(
            ["up", "--data-dir", "EMPTY", "--store", "memory", "--etcd-servers", "URL"],
            1,
            "up: error: --etcd-servers needs --store etcd (got --store memory)",
            id="up-etcd-servers-with-memory",
        ),
        pytest.param(
            ["apiserver", "--data-dir", "EMPTY", "--port", "70000"],
            2,
            "must be a port number",
            id="apiserver-port-out-of-range",
        ),
        pytest.param(
            ["up", "--data-dir", "EMPTY", "--store", "bogus"],
            1,
            "up: error: unsupported store 'bogus'",
            id="up-unknown-store",
        ),
        pytest.param(
            ["up", "--data-dir", "EMPTY", "--store", "memory", "--port", "BUSY_PORT"],
            1,
            "up: error: 127.0.0.1:BUSY_PORT is already in use (another draplane?): stop it or "
            "choose another port with --port PORT",
            id="up-port-in-use",
        ),
        pytest.param(
            ["apiserver", "--data-dir", "EMPTY", "--store", "memory", "--port", "BUSY_PORT"],
            1,
            "apiserver: error: 127.0.0.1:BUSY_PORT is already in use (another draplane?): "
            "stop it or choose another port with --port PORT",
            id="apiserver-port-in-use",
        ),
        pytest.param(
            ["scheduler", "--kubeconfig", "KUBECONFIG", "--metrics-port", "BUSY_PORT"],
            1,
            "scheduler: error: 127.0.0.1:BUSY_PORT is already in use (another draplane?): "
            "stop it or choose another port with --metrics-port PORT",
            id="metrics-port-in-use",
        ),
        pytest.param(
            ["up", "--data-dir", "EMPTY", "--nodes", "many"],
            2,
            "invalid integer: 'many'",
            id="up-nodes-not-a-number",
        ),
        pytest.param(
            ["nodes", "--kubeconfig", "MISSING", "--count", "0"],
            2,
            "argument --count: must be 1 or more",
            id="nodes-zero-count",
        ),
        pytest.param(
            ["nodes", "--kubeconfig", "MISSING", "--count", "2", "--data-dir", "EMPTY"],
            1,
            "nodes: error: cannot use kubeconfig",
            id="nodes-kubeconfig-missing",
        ),
        pytest.param(
            ["kubeconfig", "--data-dir", "EMPTY", "--user", "alice"],
            1,
            "kubeconfig: error: no API server has started with data dir",
            id="kubeconfig-before-any-apiserver",
        ),
        pytest.param(
            [
                *("up", "--data-dir", "EMPTY", "--store", "memory"),
                *("--kubernetes-version", "1.28", "--kubelet-dir", "EMPTY"),
            ],
            1,
            "up: error: --kubelet-dir needs resource.k8s.io/v1 (--kubernetes-version 1.36)",
            id="up-kubelet-dir-in-1.28",
        ),
        pytest.param(
            ["driver", "example", "kubelet-plugin", "--node-name", "n", "--kubelet-dir", "EMPTY"],
            1,
            "/n/kubeconfig: start `draplane nodes --kubelet-dir",
            id="kubelet-plugin-without-node-kubeconfig",
        ),
        pytest.param(
            ["driver", "example"],
            1,
            "the following arguments are required: --kubeconfig",
            id="driver-example-without-kubeconfig",
        ),
        pytest.param(["frobnicate"], 2, "invalid choice: 'frobnicate'", id="unknown-command"),
    ],
)
def test_usage_errors(
    argv: list[str],
    code: int,
    message: str,
    files: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    got, out, err = run_main([files.get(arg, arg) for arg in argv], capsys)
    assert got == code
    assert message.replace("BUSY_PORT", files["BUSY_PORT"]) in err
    assert "Traceback" not in err
    assert out == ""


def test_apiserver_on_a_store_in_use_refuses_to_start(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = data_dir / "draplane.db"
    held = StoreLock.acquire(str(store))  # as another running API server holds it
    try:
        code, out, err = run_main(["apiserver", "--data-dir", str(data_dir), "--port", "0"], capsys)
    finally:
        held.release()
    assert (code, out) == (1, "")
    [line] = [ln for ln in err.splitlines() if "error:" in ln]
    assert f"apiserver: error: store {store} is in use by another draplane process" in line
    assert not store.exists()  # refused before the database was opened


def test_nodes_without_token_file_in_data_dir(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "elsewhere").mkdir()
    argv = ["nodes", "--kubeconfig", str(data_dir / "kubeconfig"), "--count", "1"]
    code, _, err = run_main([*argv, "--data-dir", str(tmp_path / "elsewhere")], capsys)
    assert code == 1
    assert f"nodes: error: no API server token file in --data-dir {tmp_path / 'elsewhere'}" in err


@pytest.mark.parametrize(
    "user",
    [
        pytest.param("a,b", id="comma"),
        pytest.param("", id="empty"),
    ],
)
def test_kubeconfig_for_an_impossible_user(
    data_dir: Path, user: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = (data_dir / "tokens").read_text()
    code, out, err = run_main(["kubeconfig", "--data-dir", str(data_dir), "--user", user], capsys)
    assert (code, out) == (1, "")
    assert "kubeconfig: error:" in err
    assert (data_dir / "tokens").read_text() == tokens


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["scheduler", "--kubeconfig", "/nonexistent/kubeconfig"],
            "draplane scheduler: error: cannot use kubeconfig /nonexistent/kubeconfig: ",
            id="scheduler-kubeconfig-missing",
        ),
        pytest.param(
            ["apiserver", "--store", "bogus"],
            "draplane apiserver: error: cannot open store 'bogus': ",
            id="apiserver-unknown-store",
        ),
    ],
)
async def test_installed_command_prints_one_error_line(
    argv: list[str], message: str, tmp_path: Path
) -> None:
    commands = Commands(tmp_path / "logs")
    if argv[0] == "apiserver":
        argv = [*argv, "--data-dir", str(tmp_path / "data")]
    result = await commands.run(*argv)
    assert result.code == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(message)
