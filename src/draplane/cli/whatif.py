"""`draplane dump` and `draplane whatif` (`draplane.whatif`).

`draplane dump --kubeconfig K -o FILE` writes the DRA-relevant state of an API server (nodes,
pods, ResourceClaims and their templates, ResourceSlices, DeviceClasses, DeviceTaintRules,
workloads, namespaces, ServiceAccounts, PriorityClasses) to FILE: JSON lines, or YAML when
FILE ends `.yaml`. Read-only.

`draplane whatif` forks that state (`--kubeconfig`, read-only, or `--from-dump FILE`), applies
hypothetical changes, schedules the pending and new pods with draplane's scheduler and
controllers in an in-process control plane, and reports the pods that would run, per-pool
utilisation before and after, and the pods still pending with their reasons. The cluster is
never written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import aiohttp

from draplane.api import errors
from draplane.cli.explain import find_kubeconfig
from draplane.cli.process import CommandError, rest_client
from draplane.explain import Snapshot
from draplane.whatif import (
    Changes,
    StateError,
    apply,
    load_objects,
    read_dump,
    read_state,
    render,
    simulate,
    whatif_json,
    write_chart,
    write_dump,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dump = subparsers.add_parser(
        "dump", help="write a cluster's DRA-relevant state to a file (read-only)"
    )
    dump.add_argument("--kubeconfig", default="", help="kubeconfig file (as kubectl finds it)")
    dump.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")
    dump.set_defaults(func=dump_main)

    whatif = subparsers.add_parser(
        "whatif",
        help="schedule a fork of a cluster after hypothetical changes (read-only)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = whatif.add_mutually_exclusive_group()
    source.add_argument("--kubeconfig", default="", help="read the state from this API server")
    source.add_argument("--from-dump", default="", metavar="FILE", help="a `draplane dump` file")
    whatif.add_argument("--add-nodes", type=int, default=0, metavar="N", help="add N nodes")
    whatif.add_argument("--like", default="", metavar="NODE", help="the node they copy")
    whatif.add_argument("--remove-pool", action="append", default=[], metavar="[DRIVER/]POOL")
    whatif.add_argument(
        "--taint-devices", nargs="+", action="extend", default=[], metavar="DRIVER/POOL/DEVICE"
    )
    whatif.add_argument("--apply", action="append", default=[], metavar="FILE",
                        help="manifests (workloads, pods, claims, ...) to add")  # fmt: skip
    whatif.add_argument("-o", "--output", choices=["markdown", "json"], default="markdown")
    whatif.add_argument("--chart", default="", metavar="FILE", help="write a PNG chart")
    whatif.add_argument("--timeout", type=float, default=300.0, help="seconds to schedule")
    whatif.add_argument("--explain-limit", type=int, default=20, metavar="N",
                        help="explain at most N pending pods")  # fmt: skip
    whatif.set_defaults(func=whatif_main)


async def _from_api(kubeconfig: str) -> Snapshot:
    client = rest_client(find_kubeconfig(kubeconfig))
    try:
        return await read_state(client)
    except errors.StatusError as err:
        raise CommandError(str(err)) from err
    except (aiohttp.ClientError, OSError) as err:
        raise CommandError(f"cannot reach the API server: {err}") from err
    finally:
        await client.close()


async def dump_main(args: argparse.Namespace) -> int:
    state = await _from_api(args.kubeconfig)
    try:
        count = write_dump(Path(args.output), state)
    except OSError as err:
        raise CommandError(f"cannot write {args.output}: {err.strerror or err}") from err
    print(f"wrote {count} objects to {args.output}", file=sys.stderr)
    return 0


def _changes(args: argparse.Namespace) -> Changes:
    if args.add_nodes < 0:
        raise CommandError("--add-nodes must not be negative")
    if args.add_nodes and not args.like:
        raise CommandError("--add-nodes needs --like NODE")
    manifests = []
    for path in args.apply:
        manifests += load_objects(Path(path))
    return Changes(
        add_nodes=args.add_nodes,
        like=args.like,
        remove_pools=args.remove_pool,
        taint_devices=args.taint_devices,
        manifests=manifests,
    )


async def whatif_main(args: argparse.Namespace) -> int:
    try:
        changes = _changes(args)
        if args.from_dump:
            original = read_dump(Path(args.from_dump))
        else:
            original = await _from_api(args.kubeconfig)
        forked = apply(original, changes)
    except StateError as err:
        raise CommandError(str(err)) from err
    try:
        outcome = await simulate(forked, timeout=args.timeout, explain_limit=args.explain_limit)
    except errors.StatusError as err:
        raise CommandError(f"the fork refused the state: {err}") from err
    doc = whatif_json(original, changes.describe(), outcome)
    sys.stdout.write(render(doc, args.output))
    if args.chart:
        write_chart(Path(args.chart), doc)
    return 0
