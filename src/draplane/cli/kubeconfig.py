"""`draplane kubeconfig --data-dir DIR --user USER`: print a kubeconfig for any user.

Adds a token for the user to `DIR/tokens` when it has none (the running API server picks it up);
the server URL comes from the admin kubeconfig the API server wrote on start, or from
`--server URL[,URL...]` (API server replicas, listed for the client's failover).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from draplane.api.auth import ADMIN
from draplane.apiserver.kubeconfig import dump_kubeconfig, kubeconfig_for_user
from draplane.cli.process import CommandError


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "kubeconfig", help="print a kubeconfig for a user of a draplane API server"
    )
    parser.add_argument("--data-dir", default="./.draplane")
    parser.add_argument(
        "--user", default=ADMIN, help="user name, e.g. system:node:node-0 or system:kube-scheduler"
    )
    parser.add_argument(
        "--group",
        action="append",
        default=None,
        help="group of a new user (repeatable; default from the user name)",
    )
    parser.add_argument(
        "--server",
        default="",
        help="API server URL, or a comma list of replicas' URLs to fail over along "
        "(default: the one in DIR/kubeconfig)",
    )
    parser.set_defaults(func=async_main)


async def async_main(args: argparse.Namespace) -> int:
    if not args.user.strip():
        raise CommandError("--user must name a user")
    groups = tuple(args.group) if args.group else None
    try:
        config = kubeconfig_for_user(
            Path(args.data_dir), args.user, groups=groups, server=args.server
        )
    except FileNotFoundError as err:
        raise CommandError(
            f"no API server has started with data dir {args.data_dir} (no kubeconfig or CA there)"
        ) from err
    except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as err:
        raise CommandError(f"cannot make a kubeconfig for {args.user!r}: {err}") from err
    sys.stdout.write(dump_kubeconfig(config))
    return 0
