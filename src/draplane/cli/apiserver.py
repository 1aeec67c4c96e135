"""`draplane apiserver --data-dir DIR --port PORT [--store sqlite|memory|etcd]`: the API server
alone (`--store etcd` with kube-apiserver's `--etcd-*` flags).

Serves HTTPS on 127.0.0.1:PORT until SIGINT/SIGTERM; `DIR/kubeconfig` is written once listening.
A store that lost writes, or a full disk, ends the command with one `error:` line.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sqlite3
from typing import Any

from draplane.api import errors, versions
from draplane.apiserver.server import ApiServer
from draplane.apiserver.serviceips import DEFAULT_SERVICE_CIDR
from draplane.cli.logs import add_logging_flags, setup_logging
from draplane.cli.process import (
    CommandError,
    add_restored_store_flag,
    listen_error,
    port_number,
    stop_on_signals,
)
from draplane.storage import mode_marker
from draplane.storage.etcd_flags import EtcdFlags, add_etcd_flags, store_spec
from draplane.storage.factory import open_storage
from draplane.storage.files import DiskFullError
from draplane.storage.interface import Storage, StoreError


def _cidr(text: str) -> str:
    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"invalid CIDR {text!r}: {err}") from err


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
        default=None,
        help='storage backend: "sqlite" (default), "memory", sqlite:///FILE or "etcd" (the '
        "default with --etcd-servers)",
    )
    parser.add_argument(
        "--audit-log-path",
        default="",
        help="write an audit.k8s.io/v1 Event JSON line per request to this file",
    )
    versions.add_argument(parser, server=True)
    parser.add_argument(
        "--service-cluster-ip-range",
        default=DEFAULT_SERVICE_CIDR,
        type=_cidr,
        help="the CIDR Services' cluster IPs are allocated from",
    )
    add_restored_store_flag(parser)
    add_etcd_flags(parser)
    add_logging_flags(parser)
    parser.set_defaults(func=async_main)


async def _open_store(
    spec: str, data_dir: str, *, restored: bool, etcd: EtcdFlags | None = None
) -> Storage:
    try:
        storage = open_storage(spec, data_dir, restored=restored, etcd=etcd)
        await storage.start()
    except StoreError as err:
        raise CommandError(str(err)) from err
    except (ValueError, OSError, sqlite3.Error, errors.StatusError) as err:
        raise CommandError(f"cannot open store {spec!r}: {err}") from err
    return storage


async def async_main(args: argparse.Namespace) -> int:
    setup_logging(args)
    try:
        # Before the store is opened: nothing is written to the other mode's data dir.
        mode = mode_marker.mode_for(args.data_dir, args.kubernetes_version)
        mode_marker.ensure_mode(args.data_dir, mode)
    except StoreError as err:
        raise CommandError(str(err)) from err
    etcd = EtcdFlags.from_args(args)
    try:
        store = store_spec(args.store, etcd)
    except ValueError as err:
        raise CommandError(str(err)) from err
    storage = await _open_store(store, args.data_dir, restored=args.restored_store, etcd=etcd)
    server = ApiServer(
        args.data_dir,
        port=args.port,
        storage=storage,
        audit_log_path=args.audit_log_path or None,
        mode=mode,
        service_cidr=args.service_cluster_ip_range,
    )
    try:
        try:
            await server.start()
        except (DiskFullError, StoreError) as err:
            raise CommandError(str(err)) from err
        except OSError as err:
            raise listen_error(args.port, err, flag="--port") from err
        stop = asyncio.Event()
        # Handlers first: a signal sent as soon as the line is read stops the server cleanly.
        with stop_on_signals(stop):
            print(
                f"draplane apiserver listening on {server.url}; "
                f"kubeconfig: {server.kubeconfig_path}",
                flush=True,
            )
            await stop.wait()
    finally:
        await server.stop()
        await storage.close()
    return 0
