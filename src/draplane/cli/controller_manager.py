"""`draplane controller-manager`: resource claim controller, garbage collector and namespace
controller against an API server, acting as the kubeconfig's user."""

from __future__ import annotations

import argparse

from prometheus_client import CollectorRegistry

from draplane.cli.driver import serve_metrics
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.client.rest import RESTClient
from draplane.controllers.manager import ControllerManager


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "controller-manager",
        help="run the resource claim controller, garbage collector and namespace controller",
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=0,
        help="serve /metrics and /healthz on 127.0.0.1:PORT (0: off)",
    )
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    client = RESTClient.from_kubeconfig(args.kubeconfig)
    metrics = CollectorRegistry()
    manager = ControllerManager(client, metrics=metrics)
    runner = await serve_metrics(metrics, port=args.metrics_port, ready=manager.has_synced)
    try:
        await manager.run()
    finally:
        if runner is not None:
            await runner.cleanup()
        await client.close()
    return 0
