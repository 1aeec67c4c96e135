"""`draplane controller-manager`: resource claim controller, garbage collector and namespace
controller against an API server, acting as the kubeconfig's user."""

from __future__ import annotations

import argparse

from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import (
    add_metrics_port_flag,
    rest_client,
    run_until_signal,
    serve_metrics,
)
from draplane.controllers.manager import ControllerManager
from draplane.metrics import component_registry


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "controller-manager",
        help="run the resource claim controller, garbage collector and namespace controller",
    )
    parser.add_argument("--kubeconfig", required=True)
    add_metrics_port_flag(parser)
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    client = rest_client(args.kubeconfig)
    try:
        metrics = component_registry()
        manager = ControllerManager(client, metrics=metrics)
        runner = await serve_metrics(metrics, port=args.metrics_port, ready=manager.has_synced)
        try:
            return await run_until_signal(manager.run, name="controller-manager")
        finally:
            if runner is not None:
                await runner.cleanup()
    finally:
        await client.close()
