"""`draplane apiserver --data-dir DIR --port PORT [--store sqlite|memory]`: the API server alone.

Serves HTTPS on 127.0.0.1:PORT until SIGINT/SIGTERM; `DIR/kubeconfig` is written once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from typing import Any

from draplane.apiserver.server import ApiServer
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.storage.factory import open_storage

log = logging.getLogger(__name__)


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "apiserver", help="run the Kubernetes-compatible API server"
    )
    parser.add_argument(
        "--data-dir",
        default="./.draplane",
        help="certificates, tokens, kubeconfig and the sqlite database",
    )
    parser.add_argument("--port", type=int, default=6443, help="HTTPS port on 127.0.0.1 (0: any)")
    parser.add_argument(
        "--store",
        default="sqlite",
        help='storage backend: "sqlite" (default), "memory" or sqlite:///FILE',
    )
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def wait_for_signal() -> None:
    """Return on SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    try:
        storage = open_storage(args.store, args.data_dir)
    except ValueError as err:
        log.error("%s", err)
        return 2
    await storage.start()
    server = ApiServer(args.data_dir, port=args.port, storage=storage)
    try:
        await server.start()
        print(
            f"draplane apiserver listening on {server.url}; kubeconfig: {server.kubeconfig_path}",
            flush=True,
        )
        await wait_for_signal()
    finally:
        await server.stop()
        await storage.close()
    return 0
