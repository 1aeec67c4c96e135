"""`draplane scheduler`: the scheduler with the DynamicResources plugin against an API server,
acting as the kubeconfig's user (normally system:kube-scheduler). With `--leader-elect` (the
default, as kube-scheduler's) it schedules only while it holds Lease kube-system/kube-scheduler.
"""

from __future__ import annotations

import argparse

from prometheus_client import CollectorRegistry

from draplane.api import errors, versions
from draplane.cli.leaderelect import add_leader_election_flags, leading
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import (
    CommandError,
    add_master_flag,
    add_metrics_port_flag,
    cluster_mode,
    component_client,
    run_until_signal,
    serve_metrics,
)
from draplane.client.informer import InformerFactory
from draplane.metrics import component_registry
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
    add_master_flag(parser)
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
    add_leader_election_flags(parser, default=True, resource_name="kube-scheduler")
    add_metrics_port_flag(parser)
    versions.add_argument(parser)
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    try:
        config = load_config(args.config) if args.config else SchedulerConfig()
    except (errors.StatusError, ValueError) as err:
        raise CommandError(f"invalid scheduler configuration: {err}") from err
    client = component_client(args.kubeconfig, args.master)
    try:
        metrics = component_registry()

        def build(mode: versions.Mode, registry: CollectorRegistry) -> Scheduler:
            try:
                return Scheduler(
                    client,
                    informers=InformerFactory(client),
                    metrics=registry,
                    queueing_hints=args.queueing_hints,
                    pre_enqueue=args.pre_enqueue,
                    config=config,
                    mode=mode,
                )
            except errors.StatusError as err:
                raise CommandError(f"invalid scheduler configuration: {err}") from err

        # Built once before the mode is known (as 1.28's, on a throwaway registry) so that a
        # bad configuration fails at once; the scheduler that runs is built for the cluster's.
        scheduler = build(versions.CLASSIC, CollectorRegistry())

        async def run_scheduler() -> None:
            nonlocal scheduler
            mode = await cluster_mode(client, args)
            scheduler = build(mode, metrics)
            await scheduler.run()

        run, elector = leading(args, client, run_scheduler, metrics=metrics)
        runner = await serve_metrics(
            metrics,
            port=args.metrics_port,
            # A standby is healthy; the leader once its caches synced.
            ready=lambda: scheduler.has_synced() or not (elector is None or elector.is_leader),
        )
        try:
            return await run_until_signal(run, name="scheduler")
        finally:
            if runner is not None:
                await runner.cleanup()
    finally:
        await client.close()
