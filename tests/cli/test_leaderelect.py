"""The `--leader-elect*` flags (Go durations, the boolean flag, the defaults) and `leading()`:
the command fails with `leaderelection lost` once the leader could not renew."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from draplane.api import kinds
from draplane.cli.leaderelect import add_leader_election_flags, duration, leading
from draplane.cli.process import CommandError
from draplane.testing.apistate import wait_for
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("15s", 15.0, id="seconds"),
        pytest.param("1m30s", 90.0, id="minutes-and-seconds"),
        pytest.param("500ms", 0.5, id="milliseconds"),
        pytest.param("2", 2.0, id="plain-number"),
        pytest.param("1.5s", 1.5, id="fraction"),
    ],
)
def test_duration(text: str, seconds: float) -> None:
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["", "s", "15x", "1s2", "-1s", "0s", "15 s"])
def test_bad_duration(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        duration(text)


@pytest.mark.parametrize(
    ("argv", "leader_elect", "name"),
    [
        pytest.param([], True, "kube-scheduler", id="default-on"),
        pytest.param(["--leader-elect"], True, "kube-scheduler", id="bare-flag"),
        pytest.param(["--leader-elect=false"], False, "kube-scheduler", id="off"),
        pytest.param(["--leader-elect-resource-name", "mine"], True, "mine", id="renamed"),
    ],
)
def test_flags(argv: list[str], leader_elect: bool, name: str) -> None:
    parser = argparse.ArgumentParser()
    add_leader_election_flags(parser, default=True, resource_name="kube-scheduler")
    args = parser.parse_args(argv)
    assert (args.leader_elect, args.leader_elect_resource_name) == (leader_elect, name)
    assert (
        args.leader_elect_lease_duration,
        args.leader_elect_renew_deadline,
        args.leader_elect_retry_period,
        args.leader_elect_resource_namespace,
    ) == (15.0, 10.0, 2.0, "kube-system")


async def test_a_leader_that_loses_its_lease_fails_the_command(cluster: Cluster) -> None:
    """What makes the process exit 1: the work stops, then `leaderelection lost`."""
    clock = FakeClock()
    parser = argparse.ArgumentParser()
    add_leader_election_flags(parser, default=True, resource_name="kube-scheduler")
    client = cluster.client()
    stopped = asyncio.Event()

    async def work() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    run, elector = leading(parser.parse_args([]), client, work, clock=clock)
    assert elector is not None
    task = asyncio.create_task(run())
    await wait_for(lambda: elector.is_leader)
    stolen = await client.get(kinds.LEASES, "kube-scheduler", "kube-system")
    stolen["spec"]["holderIdentity"] = "intruder"
    await client.update(kinds.LEASES, stolen)
    for _ in range(5):  # the 10 s renew deadline
        await wait_for(lambda: clock.sleepers == 1)
        clock.step(2)
    with pytest.raises(CommandError, match=r"leaderelection lost: .* could not renew lease"):
        await asyncio.wait_for(task, 5)
    assert stopped.is_set()
    assert not elector.is_leader


def test_without_leader_election_the_work_runs_as_is() -> None:
    parser = argparse.ArgumentParser()
    add_leader_election_flags(parser, default=False, resource_name="")

    async def work() -> None: ...

    run, elector = leading(parser.parse_args([]), None, work)  # type: ignore[arg-type]
    assert (run, elector) == (work, None)
