"""`draplane apiserver --data-dir DIR --port PORT [--store sqlite|memory]`: the API server alone.

Serves HTTPS on 127.0.0.1:PORT until SIGINT/SIGTERM; `DIR/kubeconfig` is written once listening.
"""

from __future__ import annotations

import argparse
import sqlite3
from typing import Any

from draplane.api import errors
from draplane.apiserver.server import ApiServer
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import CommandError, listen_error, port_number, wait_for_signal
from draplane.storage.factory import open_storage
from draplane.storage.interface import Storage


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "apiserver", help="run the Kubernetes-compatible API server"
    )
    parser.add_argument(
        "--data-dir",
        default="./.draplane",
        help="certificates, tokens, kubeconfig and the sqlite database",
    )
    parser.add_argument(
        "--port", type=port_number, default=6443, help="HTTPS port on 127.0.0.1 (0: any)"
    )
    parser.add_argument(
        "--store",
        default="sqlite",
        help='storage backend: "sqlite" (default), "memory" or sqlite:///FILE',
    )
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def _open_store(spec: str, data_dir: str) -> Storage:
    try:
        storage = open_storage(spec, data_dir)
        await storage.start()
    except (ValueError, OSError, sqlite3.Error, errors.StatusError) as err:
        raise CommandError(f"cannot open store {spec!r}: {err}") from err
    return storage


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    storage = await _open_store(args.store, args.data_dir)
    server = ApiServer(args.data_dir, port=args.port, storage=storage)
    try:
        try:
            await server.start()
        except OSError as err:
            raise listen_error(args.port, err, flag="--port") from err
        print(
            f"draplane apiserver listening on {server.url}; kubeconfig: {server.kubeconfig_path}",
            flush=True,
        )
        await wait_for_signal()
    finally:
        await server.stop()
        await storage.close()
    return 0
