"""`draplane driver example`: the control-plane side of the example DRA driver.

Also holds `serve_metrics`, the `--metrics-port` endpoint (`/metrics`, `/healthz` on 127.0.0.1)
shared with `draplane nodes`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.client.rest import RESTClient
from draplane.drivers.example import DRIVER_NAME, Resources, example_controller

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("driver", help="run the control-plane side of a DRA driver")
    drivers = parser.add_subparsers(dest="driver", required=True, metavar="DRIVER")
    example = drivers.add_parser(
        "example", help=f"the example driver ({DRIVER_NAME}): allocation, scheduling answers"
    )
    example.add_argument("--kubeconfig", required=True, help="kubeconfig of the driver's user")
    mode = example.add_mutually_exclusive_group()
    mode.add_argument(
        "--devices-per-node",
        type=int,
        default=8,
        help="devices on every node (0: unlimited; default 8)",
    )
    mode.add_argument(
        "--network-attached",
        type=int,
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
    example.add_argument("--workers", type=int, default=5)
    example.add_argument(
        "--metrics-port",
        type=int,
        default=0,
        help="serve /metrics and /healthz on 127.0.0.1:PORT (0: off)",
    )
    add_logging_flags(example)
    example.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    client = RESTClient.from_kubeconfig(args.kubeconfig)
    registry = CollectorRegistry()
    resources = Resources(
        devices_per_node=args.devices_per_node,
        network_attached=args.network_attached,
        shareable=args.shareable,
    )
    controllers = [
        example_controller(
            client,
            driver_name=name,
            resources=resources,
            metrics=registry,
            workers=args.workers,
        )
        for name in args.driver_names or [DRIVER_NAME]
    ]
    runner = await serve_metrics(
        registry, port=args.metrics_port, ready=lambda: all(c.has_synced() for c in controllers)
    )
    try:
        await asyncio.gather(*(c.run() for c in controllers))
    finally:
        if runner is not None:
            await runner.cleanup()
        await client.close()
    return 0


async def serve_metrics(
    registry: CollectorRegistry, *, port: int, ready: Callable[[], bool]
) -> web.AppRunner | None:
    """Start the metrics endpoint when `port` is non-zero; the caller cleans the runner up."""
    if not port:
        return None

    async def metrics(_request: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def healthz(_request: web.Request) -> web.Response:
        return web.Response(text="ok" if ready() else "not synced", status=200 if ready() else 503)

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    log.info("serving metrics on http://127.0.0.1:%d/metrics", port)
    return runner
