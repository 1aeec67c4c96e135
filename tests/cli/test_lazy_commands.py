"""`draplane COMMAND` imports only that command's module: a kubelet plugin process per node
(`draplane driver example kubelet-plugin`) never loads the API server, which halves its memory."""

from __future__ import annotations

import subprocess
import sys

import pytest

from draplane.cli.main import COMMAND_MODULES, build_parser

PROBE = """
import sys
from draplane.cli.main import build_parser
build_parser({command!r}).parse_args({argv!r})
print(",".join(sorted(m for m in sys.modules if m.startswith("draplane.apiserver"))))
"""


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(
            ["driver", "example", "kubelet-plugin", "--node-name", "n", "--kubelet-dir", "/d"],
            id="kubelet-plugin",
        ),
        pytest.param(
            [
                "driver-check",
                "--kubelet-dir",
                "/d",
                "--node-name",
                "n",
                "--driver",
                "x",
                "--kubeconfig",
                "k",
            ],
            id="driver-check",
        ),
    ],
)
def test_a_plugin_process_does_not_load_the_api_server(argv: list[str]) -> None:
    code = PROBE.format(command=argv[0], argv=argv)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_every_command_has_its_module() -> None:
    full = build_parser()
    [sub] = [a for a in full._actions if a.dest == "command"]
    assert sorted(sub.choices) == sorted(COMMAND_MODULES)  # type: ignore[arg-type]
    for command in COMMAND_MODULES:
        [only] = [a for a in build_parser(command)._actions if a.dest == "command"]
        # Exactly the commands of the command's module (`whatif` also holds `dump`).
        siblings = {c for c, m in COMMAND_MODULES.items() if m == COMMAND_MODULES[command]}
        assert set(only.choices) == siblings  # type: ignore[arg-type]
