"""What a simulated container's command means (`containercommand.run_of`): run time, exit code
and printed lines of the commands draplane knows, and None for the ones it does not."""

from __future__ import annotations

import pytest

from draplane.api.containercommand import Run, run_of
from draplane.api.meta import Obj


def container(
    *command: str, args: tuple[str, ...] = (), image: str = "registry.k8s.io/pause"
) -> Obj:
    out: Obj = {"name": "ctr", "image": image}
    if command:
        out["command"] = list(command)
    if args:
        out["args"] = list(args)
    return out


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(container("true"), Run(0.0), id="true"),
        pytest.param(container("/bin/false"), Run(0.0, 1), id="false-by-path"),
        pytest.param(container("sleep", args=("5",)), Run(5.0), id="sleep-args"),
        pytest.param(container("sleep", "1m", "30"), Run(90.0), id="sleep-sums-suffixes"),
        pytest.param(container("sleep", "infinity"), Run(None), id="sleep-infinity"),
        pytest.param(
            container("echo", "hello", "world"), Run(0.0, 0, ((0.0, "hello world"),)), id="echo"
        ),
        pytest.param(container("env"), Run(0.0), id="env"),
        pytest.param(container("sh", "-c", "exit 3"), Run(0.0, 3), id="sh-exit"),
        pytest.param(
            container("sh", "-c", "echo start; sleep 2; echo 'done now' && exit 4"),
            Run(2.0, 4, ((0.0, "start"), (2.0, "done now"))),
            id="sequence",
        ),
        pytest.param(
            container("/bin/bash", "-c", "false && echo skipped; echo after"),
            Run(0.0, 0, ((0.0, "after"),)),
            id="and-skips-after-failure",
        ),
        pytest.param(container("sh", "-c", "false"), Run(0.0, 1), id="last-status-is-the-exit"),
        pytest.param(container("sh", "-c", "env; sleep 3600"), Run(3600.0), id="demo-spec"),
        pytest.param(
            container("sh", "-c", "sleep 1; sleep infinity"), Run(None), id="then-forever"
        ),
        pytest.param(container("sh", "-c", "exit 257"), Run(0.0, 1), id="exit-code-mod-256"),
        pytest.param(container(image="busybox"), Run(0.0), id="busybox-default-exits"),
        pytest.param(container(image="docker.io/library/alpine:3.20"), Run(0.0), id="alpine"),
        pytest.param(container(image="ubuntu@sha256:abc"), Run(0.0), id="ubuntu-by-digest"),
        pytest.param(container(image="nginx:1.27"), None, id="server-image-runs"),
        pytest.param(container(image="registry.k8s.io/pause"), None, id="pause-runs"),
        pytest.param(container("nginx", "-g", "daemon off;"), None, id="unknown-command"),
        pytest.param(container("sh", "-c", "sleep 5 | cat"), None, id="pipe-unknown"),
        pytest.param(container("sh", "-c", "echo 'unclosed"), None, id="bad-quoting-unknown"),
        pytest.param(container("sh", "script.sh"), None, id="shell-script-file-unknown"),
        pytest.param(container("sleep", "soon"), None, id="sleep-not-a-number"),
        pytest.param(container("sleep", "nan"), None, id="sleep-nan"),
        pytest.param(container("sh", "-c", "exit x"), None, id="exit-not-a-number"),
    ],
)
def test_run_of(spec: Obj, expected: Run | None) -> None:
    assert run_of(spec) == expected
