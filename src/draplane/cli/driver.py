"""`draplane driver example`: the control-plane side of the example DRA driver, acting as the
kubeconfig's user: in 1.36 (structured parameters) the ResourceSlices of a network-attached pool
(nodes publish their own); in 1.28 (classic DRA) allocation and PodSchedulingContext answers.
With `--leader-elect` (the default: two replicas allocating at once could hand out one device
twice) it runs only while it holds Lease kube-system/<first driver name>-controller."""

from __future__ import annotations

import argparse
import asyncio
import math
from collections.abc import Callable

from draplane.api import versions
from draplane.cli import kubeletplugin
from draplane.cli.leaderelect import add_leader_election_flags, leading
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import (
    CommandError,
    add_master_flag,
    add_metrics_port_flag,
    cluster_mode,
    component_client,
    non_negative,
    positive,
    run_until_signal,
    serve_metrics,
)
from draplane.dra.controller import DRIVER_WORKERS, RECHECK_DELAY_SECONDS, Delays, DriverController
from draplane.drivers.example import (
    DRIVER_NAME,
    DeviceProfile,
    NetworkPoolController,
    Resources,
    example_controller,
)
from draplane.metrics import component_registry


def positive_seconds(value: str) -> float:
    """argparse type: a finite number of seconds > 0."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {value}")
    return seconds


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("driver", help="run the control-plane side of a DRA driver")
    drivers = parser.add_subparsers(dest="driver", required=True, metavar="DRIVER")
    example = drivers.add_parser(
        "example",
        help=f"the example driver ({DRIVER_NAME}): 1.36 network-attached slices; 1.28 "
        "allocation and scheduling answers",
    )
    example.add_argument(
        "--kubeconfig", default="", help="kubeconfig of the driver's user (required)"
    )
    add_master_flag(example)
    mode = example.add_mutually_exclusive_group()
    mode.add_argument(
        "--devices-per-node",
        type=non_negative,
        default=8,
        help="devices on every node (0: unlimited; default 8)",
    )
    mode.add_argument(
        "--network-attached",
        type=non_negative,
        default=0,
        metavar="N",
        help="a cluster-wide pool of N devices instead of per-node devices",
    )
    example.add_argument(
        "--shareable", action="store_true", help="every allocation may be shared by several pods"
    )
    example.add_argument(
        "--driver-name",
        action="append",
        dest="driver_names",
        metavar="NAME",
        help=f"driver name (default {DRIVER_NAME}); repeat to "
        "run several drivers of the same kind in one process",
    )
    add_device_flags(example)
    example.add_argument("--workers", type=positive, default=DRIVER_WORKERS)
    example.add_argument(
        "--recheck-delay",
        type=positive_seconds,
        default=RECHECK_DELAY_SECONDS,
        metavar="SECONDS",
        help="how often pending scheduling answers are recomputed "
        f"(default {RECHECK_DELAY_SECONDS:g})",
    )
    add_leader_election_flags(example, default=True, resource_name="")
    add_metrics_port_flag(example)
    versions.add_argument(example)
    add_logging_flags(example)
    example.set_defaults(func=async_main)
    parts = example.add_subparsers(dest="part", metavar="PART")
    kubeletplugin.register(parts, add_device_flags=add_device_flags)


def add_device_flags(parser: argparse.ArgumentParser) -> None:
    """The devices of the example driver in structured mode (`--kubernetes-version 1.36`)."""
    parser.add_argument(
        "--device-model",
        default="A100",
        metavar="MODEL",
        help="structured mode: the `model` attribute of every device (default A100)",
    )
    parser.add_argument(
        "--device-memory",
        type=_quantity,
        default="80Gi",
        metavar="QUANTITY",
        help="structured mode: the `memory` capacity of every device (default 80Gi)",
    )
    parser.add_argument(
        "--partitionable",
        type=non_negative,
        default=0,
        metavar="N",
        help="structured mode: every device also offers N partitions sharing its memory "
        "(sharedCounters / consumesCounters; default 0: not partitionable)",
    )


def device_profile(args: argparse.Namespace, *, count: int) -> DeviceProfile:
    return DeviceProfile(
        count=count,
        model=args.device_model,
        memory=args.device_memory,
        partitions=args.partitionable,
    )


def _quantity(value: str) -> str:
    try:
        DeviceProfile(count=0, memory=value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a quantity: {value!r}") from None
    return value


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    if not args.kubeconfig:
        raise CommandError("the following arguments are required: --kubeconfig")
    client = component_client(args.kubeconfig, args.master)
    try:
        registry = component_registry()
        resources = Resources(
            devices_per_node=args.devices_per_node,
            network_attached=args.network_attached,
            shareable=args.shareable,
        )
        names = list(dict.fromkeys(args.driver_names or [DRIVER_NAME]))
        # 1.28's allocating controllers, built up front (their metrics are served at once).
        allocating: list[DriverController | NetworkPoolController] = [
            example_controller(
                client,
                driver_name=name,
                resources=resources,
                metrics=registry,
                workers=args.workers,
                delays=Delays(recheck=args.recheck_delay),
            )
            for name in names
        ]
        controllers = list(allocating)

        def network_pools() -> list[DriverController | NetworkPoolController]:
            """1.36: no allocation (nodes publish their own pools): only the network-attached
            pool is published here."""
            profile = device_profile(args, count=args.network_attached)
            return [
                NetworkPoolController(client, profile, driver_name=name)
                for name in names
                if args.network_attached
            ]

        sides: dict[versions.Dra, Callable[[], list[DriverController | NetworkPoolController]]]
        sides = {versions.Dra.CLASSIC: lambda: allocating, versions.Dra.STRUCTURED: network_pools}

        async def run() -> None:
            controllers[:] = sides[(await cluster_mode(client, args)).dra]()
            await asyncio.gather(*(c.run() for c in controllers))
            await asyncio.Event().wait()

        work, elector = leading(
            args, client, run, metrics=registry, resource_name=f"{names[0]}-controller"
        )
        runner = await serve_metrics(
            registry,
            port=args.metrics_port,
            ready=lambda: (
                all(c.has_synced() for c in controllers)
                or not (elector is None or elector.is_leader)
            ),
        )
        try:
            return await run_until_signal(work, name="driver example")
        finally:
            if runner is not None:
                await runner.cleanup()
    finally:
        await client.close()
