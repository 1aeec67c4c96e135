"""The `--leader-elect*` flags: Go durations, the boolean flag, and the defaults per component."""

from __future__ import annotations

import argparse

import pytest

from draplane.cli.leaderelect import add_leader_election_flags, duration


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
