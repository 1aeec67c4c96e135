"""`draplane up`: the whole control plane in one process (API server on the embedded store,
controller-manager, scheduler, example driver, simulated nodes)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any

from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "up",
        help="run the whole control plane in one process",
        description="Start API server (HTTPS on 127.0.0.1), controller-manager, scheduler, the "
        "example driver (ResourceClass `example`) and simulated nodes.",
    )
    parser.add_argument(
        "--data-dir",
        default="./.draplane",
        help="where the store, certificates, tokens and kubeconfig live",
    )
    parser.add_argument("--port", type=int, default=6443)
    parser.add_argument("--nodes", type=int, default=4, help="number of simulated nodes")
    parser.add_argument("--store", default="sqlite", help="sqlite (default) or memory")
    parser.add_argument(
        "--transport",
        choices=("local", "http"),
        default="local",
        help="how components reach the API: in-process or over HTTPS",
    )
    parser.add_argument("--devices-per-node", type=int, default=8)
    parser.add_argument("--network-attached", type=int, default=0)
    parser.add_argument("--shareable", action="store_true")
    parser.add_argument("--queueing-hints", choices=("on", "off"), default="on")
    parser.add_argument("--pre-enqueue", choices=("on", "off"), default="on")
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    config = ControlPlaneConfig(
        data_dir=args.data_dir,
        port=args.port,
        nodes=args.nodes,
        store=args.store,
        transport=args.transport,
        queueing_hints=args.queueing_hints == "on",
        pre_enqueue=args.pre_enqueue == "on",
        drivers=[
            DriverSpec(
                devices_per_node=args.devices_per_node,
                network_attached=args.network_attached,
                shareable=args.shareable,
            )
        ],
    )
    plane = ControlPlane(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await plane.start()
    except Exception as err:
        print(f"draplane up: {err}", file=sys.stderr)
        await plane.stop()
        return 1
    print(
        f"draplane is up: API server {plane.apiserver.url}, {args.nodes} nodes, "
        f"ResourceClass example (driver.example.com)",
        flush=True,
    )
    print(f"kubeconfig: {plane.kubeconfig_path}", flush=True)
    print(f"try: kubectl --kubeconfig {plane.kubeconfig_path} get nodes", flush=True)
    await stop.wait()
    print("stopping...", flush=True)
    await plane.stop()
    return 0
