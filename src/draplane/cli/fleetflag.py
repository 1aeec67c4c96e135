"""`--fleet NAME|PATH`, the fleet-profile flag of `draplane up`, `nodes` and `bench`: a shipped
profile (`draplane.fleets.shipped_fleets`) or a user's fleet file, loaded and checked when the
arguments are parsed (a bad file is a usage error naming the field)."""

from __future__ import annotations

import argparse

from draplane.fleets import Fleet, FleetError, load_fleet, shipped_fleets


def add_fleet_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fleet",
        type=_fleet,
        default=None,
        metavar="NAME|PATH",
        help="the nodes' devices and the DeviceClasses from a fleet profile (Kubernetes 1.36): "
        f"{', '.join(shipped_fleets())}, or a fleet file; replaces the example driver's device "
        "flags",
    )


def _fleet(value: str) -> Fleet:
    try:
        return load_fleet(value)
    except FleetError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
