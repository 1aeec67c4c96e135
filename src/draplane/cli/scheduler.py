"""`draplane scheduler`: the scheduler with the DynamicResources plugin against an API server,
acting as the kubeconfig's user (normally system:kube-scheduler)."""

from __future__ import annotations

import argparse
import sys

from prometheus_client import CollectorRegistry

from draplane.api import errors
from draplane.cli.driver import serve_metrics
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.client.informer import InformerFactory
from draplane.client.rest import RESTClient
from draplane.scheduler.config import SchedulerConfig, load_config
from draplane.scheduler.scheduler import Scheduler


def _on_off(value: str) -> bool:
    if value not in ("on", "off"):
        raise argparse.ArgumentTypeError("must be on or off")
    return value == "on"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "scheduler", help="run the scheduler (DynamicResources plugin included)"
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--config", help="KubeSchedulerConfiguration YAML file")
    parser.add_argument(
        "--queueing-hints",
        type=_on_off,
        default=True,
        metavar="on|off",
        help="requeue pods only for events their rejecting plugins' hints accept (default on)",
    )
    parser.add_argument(
        "--pre-enqueue",
        type=_on_off,
        default=True,
        metavar="on|off",
        help="hold pods whose claims do not exist yet out of scheduling (default on)",
    )
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
    try:
        config = load_config(args.config) if args.config else SchedulerConfig()
    except errors.StatusError as err:
        print(f"error: invalid scheduler configuration: {err}", file=sys.stderr)
        return 1
    client = RESTClient.from_kubeconfig(args.kubeconfig)
    metrics = CollectorRegistry()
    try:
        scheduler = Scheduler(
            client,
            informers=InformerFactory(client),
            metrics=metrics,
            queueing_hints=args.queueing_hints,
            pre_enqueue=args.pre_enqueue,
            config=config,
        )
    except errors.StatusError as err:
        await client.close()
        print(f"error: invalid scheduler configuration: {err}", file=sys.stderr)
        return 1
    runner = await serve_metrics(metrics, port=args.metrics_port, ready=scheduler.has_synced)
    try:
        await scheduler.run()
    finally:
        if runner is not None:
            await runner.cleanup()
        await client.close()
    return 0
