"""`draplane fleets [NAME|PATH]`: the shipped fleet profiles with their descriptions, or what
one profile puts on its nodes (node types with counts, devices per driver, DeviceClasses)."""

from __future__ import annotations

import argparse
from typing import Any

from draplane.cli.process import CommandError
from draplane.fleets import Fleet, FleetError, load_fleet, node_slice_specs, shipped_fleets


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "fleets",
        help="list the fleet profiles, or describe one",
        description="Without an argument: the shipped fleet profiles (for --fleet on up, nodes "
        "and bench). With one: its node types, devices per driver and DeviceClasses.",
    )
    parser.add_argument("fleet", nargs="?", metavar="NAME|PATH")
    parser.set_defaults(func=async_main)


def describe(fleet: Fleet) -> list[str]:
    lines = [f"{fleet.name}: {fleet.description}".rstrip(": ")]
    for entry in fleet.nodes:
        node_type = entry.node_type
        lines.append(f"  {entry.count} x node type {node_type.name}")
        for driver in node_type.drivers:
            specs = node_slice_specs(node_type, driver, "node-0")
            devices = sum(len(s.get("devices") or []) for s in specs)
            counters = sum(len(s.get("sharedCounters") or []) for s in specs)
            shared = f", {counters} counter sets" if counters else ""
            lines.append(f"    {driver}: {devices} devices in {len(specs)} slices{shared}")
    classes = ", ".join(str(c["metadata"]["name"]) for c in fleet.device_classes) or "none"
    lines.append(f"  DeviceClasses: {classes}")
    return lines


async def async_main(args: argparse.Namespace) -> int:
    if args.fleet is None:
        for name in shipped_fleets():
            print(f"{name}\t{load_fleet(name).description}")
        return 0
    try:
        fleet = load_fleet(args.fleet)
    except FleetError as err:
        raise CommandError(str(err)) from err
    print("\n".join(describe(fleet)))
    return 0
