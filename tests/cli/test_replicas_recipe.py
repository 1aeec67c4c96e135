"""README's recipe for two API server replicas with leader-elected components: every `draplane`
command in it parses with the real command line (flags and values as written), and the set of
commands is the one `tests/e2e/test_faults.py` runs as processes."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from draplane.cli.main import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- replicas-recipe: start -->", "<!-- replicas-recipe: end -->"
SERVERS = "https://127.0.0.1:6443,https://127.0.0.1:6444"


def recipe_commands() -> list[list[str]]:
    text = README.read_text()
    block = text[text.index(START) : text.index(END)].replace("\\\n", " ")
    commands: list[list[str]] = []
    for line in block.splitlines():
        words = shlex.split(line.replace("$SERVERS", SERVERS))
        if words[:1] == ["draplane"]:
            words = words[1 : words.index(">") if ">" in words else None]
            commands.append([w for w in words if w != "&"])
    return commands


def test_recipe_names_every_component() -> None:
    subcommands = [c[0] for c in recipe_commands()]
    assert subcommands.count("apiserver") == 2
    assert subcommands.count("scheduler") == 2
    assert subcommands.count("driver") == 2
    assert {"controller-manager", "nodes", "kubeconfig"} <= set(subcommands)


@pytest.mark.parametrize("args", recipe_commands(), ids=lambda a: "-".join(a[:2]))
def test_recipe_command_parses(args: list[str]) -> None:
    parsed = build_parser().parse_args(args)
    if args[0] == "apiserver":
        assert (parsed.store, parsed.etcd_servers) == ("etcd", "http://127.0.0.1:2379")
    if args[0] == "kubeconfig":
        assert parsed.server == SERVERS
    if args[0] in ("scheduler", "driver", "controller-manager"):
        assert parsed.leader_elect is True
