"""`draplane driver-check --kubelet-dir DIR --node-name N --driver NAME --kubeconfig K`: run the
conformance checks of `draplane.drivercheck` against the kubelet plugin of driver NAME registered
in `DIR/N/plugins_registry/`, and print a report per check (`-o json` for machines). The
kubeconfig's user creates and allocates the harness's claims (an admin: the API server data
dir's `kubeconfig`). Exit code 1 when a check fails."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import add_master_flag, rest_client
from draplane.drivercheck import Options, run_checks
from draplane.kubeletapi import DEFAULT_TIMEOUT


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "driver-check",
        help="conformance checks of a DRA driver's kubelet plugin registered with a node",
    )
    parser.add_argument("--kubelet-dir", required=True, help="the nodes' kubelet directory")
    parser.add_argument("--node-name", required=True)
    parser.add_argument("--driver", required=True, help="the DRA driver name")
    parser.add_argument(
        "--kubeconfig", required=True, help="an admin's kubeconfig (creates the claims)"
    )
    add_master_flag(parser)
    parser.add_argument("--namespace", default="driver-check", help="of the harness's claims")
    parser.add_argument(
        "--opaque-parameters",
        default='{"driverCheck": "true"}',
        help="JSON object: the opaque config parameters of the claims with configs",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per DRA call"
    )
    parser.add_argument(
        "--plugin-command",
        default="",
        help="shell command that starts the plugin on this node: the harness SIGKILLs the "
        "running plugin during a prepare and runs it (the restarted plugin keeps running)",
    )
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    client = rest_client(args.kubeconfig, args.master)
    try:
        report = await run_checks(
            Options(
                kubelet_dir=Path(args.kubelet_dir),
                node=args.node_name,
                driver=args.driver,
                client=client,
                namespace=args.namespace,
                parameters=orjson.loads(args.opaque_parameters),
                timeout=args.timeout,
                plugin_command=args.plugin_command,
            )
        )
    finally:
        await client.close()
    if args.output == "json":
        sys.stdout.write(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(report.to_text())
    return 0 if report.ok else 1
