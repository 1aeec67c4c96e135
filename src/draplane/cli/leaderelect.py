"""The `--leader-elect*` flags of the components that run as replicas (controller-manager,
scheduler, a driver's controller), as component-base's LeaderElectionConfiguration spells them,
and `leading()`: the component's work, run only while this process holds the Lease.

The holder identity is hostname + "_" + a UUID; the lease is released on a clean shutdown
(ReleaseOnCancel), so a standby takes over at once; a leader that cannot renew stops its work
before its lease can expire for the others and the process exits 1, as Kubernetes components
exit on "leaderelection lost".
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry

from draplane.cli.process import CommandError
from draplane.client.interface import Client
from draplane.client.leaderelection import LeaderElectionLost, LeaderElector
from draplane.clock import REAL_CLOCK, Clock

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(value: str) -> float:
    """argparse type: a Go duration (`15s`, `1m30s`, `500ms`) or plain seconds, above 0."""
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise argparse.ArgumentTypeError(f"invalid duration {value!r}") from None
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {value}")
    return seconds


def _bool(value: str) -> bool:
    if value.lower() not in ("true", "false", "1", "0"):
        raise argparse.ArgumentTypeError(f"must be true or false, not {value!r}")
    return value.lower() in ("true", "1")


def add_leader_election_flags(
    parser: argparse.ArgumentParser, *, default: bool, resource_name: str
) -> None:
    group = parser.add_argument_group("leader election")
    group.add_argument(
        "--leader-elect",
        type=_bool,
        nargs="?",
        const=True,
        default=default,
        metavar="true|false",
        help="run only while holding a Lease, so that one of several replicas works at a "
        f"time (default {str(default).lower()})",
    )
    group.add_argument("--leader-elect-lease-duration", type=duration, default=15.0)
    group.add_argument("--leader-elect-renew-deadline", type=duration, default=10.0)
    group.add_argument("--leader-elect-retry-period", type=duration, default=2.0)
    group.add_argument(
        "--leader-elect-resource-name",
        default=resource_name,
        help=f"the Lease's name (default {resource_name or 'the driver controller name'})",
    )
    group.add_argument("--leader-elect-resource-namespace", default="kube-system")


def leading(
    args: argparse.Namespace,
    client: Client,
    work: Callable[[], Awaitable[None]],
    *,
    metrics: CollectorRegistry | None = None,
    resource_name: str = "",
    clock: Clock = REAL_CLOCK,
) -> tuple[Callable[[], Awaitable[None]], LeaderElector | None]:
    """`work` as the component runs it: behind the Lease when `--leader-elect`, else as is.
    Also the elector (None without leader election), for readiness."""
    if not args.leader_elect:
        return work, None
    try:
        elector = LeaderElector(
            client,
            lease_name=args.leader_elect_resource_name or resource_name,
            namespace=args.leader_elect_resource_namespace,
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
            metrics=metrics,
            clock=clock,
        )
    except ValueError as err:
        raise CommandError(str(err)) from err

    async def run() -> None:
        try:
            await elector.run(work)
        except LeaderElectionLost as err:
            raise CommandError(str(err)) from err

    return run, elector
