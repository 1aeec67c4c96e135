"""Entry point of the `draplane` command: builds the subcommand parser and runs the chosen one.

Each subcommand lives in its own module exposing `register(subparsers)`, which adds a parser
whose `func` default is an `async def main(args) -> int`.

Every command runs with the garbage collector settings of `draplane.gcpolicy` (thresholds for a
heap of long-lived API objects, and a timer on every collection) and the TLS read buffer of
`draplane.tlsbuffers` (32 KiB per connection instead of asyncio's 256 KiB), on the event loop
of `draplane.eventloop` (uvloop unless `DRAPLANE_EVENT_LOOP=asyncio`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from draplane import eventloop, gcpolicy, tlsbuffers
from draplane.cli.process import CommandError

# Module names under draplane.cli that provide subcommands; missing ones are skipped so that
# the command works while components are being added.
SUBCOMMAND_MODULES = (
    "apiserver",
    "kubeconfig",
    "controller_manager",
    "scheduler",
    "driver",
    "nodes",
    "up",
    "bench",
    "fleets",
    "etcd_path",
    "explain",
    "whatif",
    "replay",
    "driver_check",
)


COMMAND_MODULES = {
    "apiserver": "apiserver",
    "kubeconfig": "kubeconfig",
    "controller-manager": "controller_manager",
    "scheduler": "scheduler",
    "driver": "driver",
    "nodes": "nodes",
    "up": "up",
    "bench": "bench",
    "etcd-path": "etcd_path",
    "fleets": "fleets",
    "explain": "explain",
    "dump": "whatif",
    "whatif": "whatif",
    "record": "replay",
    "replay": "replay",
    "driver-check": "driver_check",
}
"""The module of each subcommand: `main` imports only the one it runs (a kubelet plugin process
per node then never loads the API server: half the memory)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of `command` alone when it is a known one."""
    parser = argparse.ArgumentParser(
        prog="draplane",
        description="Kubernetes Dynamic Resource Allocation control plane in Python.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    only = COMMAND_MODULES.get(command or "")
    for module_name in (only,) if only else SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"draplane.cli.{module_name}")
        except ModuleNotFoundError as err:
            if err.name == f"draplane.cli.{module_name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    gcpolicy.configure()
    tlsbuffers.configure()
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    try:
        code: int = eventloop.run(args.func(args))
    except KeyboardInterrupt:
        return 130
    except (CommandError, eventloop.UnknownEventLoop) as err:
        print(f"draplane {args.command}: error: {err}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
