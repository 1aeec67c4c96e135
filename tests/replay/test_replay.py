"""`draplane record` / `draplane replay`: a real run on a test plane (nodes joining, user pods
and claims, a Deployment whose pods and claims the controllers create, a pod deleted) is
recorded through the API and replayed at 10x into a fresh draplane, which ends with the same
pods bound and the same devices allocated per pool; two replays with queueing hints on and off
compare as the same final allocation; bad input is one error line and exit code 1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.explain.conftest import (
    create_claim,
    create_class,
    create_node,
    create_pod,
    strip,
    wait_bound,
)
from tests.whatif.conftest import template_pod

from draplane.api import meta
from draplane.api.kinds import DEPLOYMENTS, PODS, RESOURCE_CLAIM_TEMPLATES_V1
from draplane.cli.main import build_parser, main
from draplane.controlplane import ControlPlane
from draplane.replay import read_recording, record
from draplane.replay.recording import open_text
from draplane.testing.apistate import wait_for
from draplane.testing.clock import FakeClock
from draplane.testing.structured import make_structured_claim, make_structured_claim_template
from draplane.testing.workloadbuilders import make_deployment
from draplane.whatif import pool_usage, read_state


async def _run_workload(plane: ControlPlane) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0", "dev-1")
    template = make_structured_claim_template(
        "one-gpu", claim=make_structured_claim().request("gpu", "gpu")
    ).obj()
    await client.create(RESOURCE_CLAIM_TEMPLATES_V1, strip(template), "default")
    await create_claim(client, make_structured_claim("c0").request("gpu", "gpu").obj())
    await create_pod(client, "p0", claim="c0")
    await wait_bound(plane, "p0")
    await create_pod(client, "p1", pod=template_pod("p1"))
    await wait_bound(plane, "p1")
    await asyncio.sleep(0.3)
    await create_node(client, "node-b", "dev-0", "dev-1")
    await create_pod(client, "p2", pod=template_pod("p2"))
    await wait_bound(plane, "p2")
    web = (
        make_deployment("web")
        .replicas(2)
        .claim_template("gpu", "one-gpu", mode=plane.config.kubernetes_version)
    )
    await client.create(DEPLOYMENTS, strip(web.obj()), "default")
    await _wait_web_bound(plane, 1)
    await asyncio.sleep(0.3)
    await client.delete(PODS, "p1", "default", grace_period_seconds=0)
    await _wait_web_bound(plane, 2)


async def _wait_web_bound(plane: ControlPlane, count: int) -> None:
    client = plane.client()
    clock = plane.clock
    assert isinstance(clock, FakeClock)

    async def bound() -> bool:
        pods = (await client.list(PODS, "default")).get("items") or []
        clock.step(1.0)
        return (
            sum(1 for p in pods if meta.name(p).startswith("web-") and meta.node_name(p)) >= count
        )

    await wait_for(bound, timeout=30, what=f"{count} web pods bound")


def _outcome(bound: list[str], pools: dict[str, tuple[int, int]]) -> tuple[object, ...]:
    named = sorted(p for p in bound if not p.startswith("default/web-"))
    return named, len(bound) - len(named), pools


async def test_a_recorded_run_replays_to_the_same_allocation(
    plane: ControlPlane, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.jsonl.gz"
    stop = asyncio.Event()
    with open_text(path, "w") as out:
        recorder = asyncio.create_task(record(plane.client(), out, stop=stop))
        await asyncio.sleep(0.2)
        await _run_workload(plane)
        await asyncio.sleep(0.3)
        stop.set()
        assert await recorder > 0
    state = await read_state(plane.client())
    real = _outcome(
        [meta.namespaced_key(p) for p in state.kind(PODS).values() if meta.node_name(p)],
        {f"{d}/{p}": (u.devices, u.allocated) for (d, p), u in pool_usage(state).items()},
    )
    assert real == (
        ["default/p0", "default/p2"],
        2,
        {"driver.example.com/node-a": (2, 2), "driver.example.com/node-b": (2, 2)},
    )
    events = read_recording(path)
    assert {e.type for e in events} >= {"ADDED", "MODIFIED", "DELETED"}
    assert all(e.object["metadata"].get("resourceVersion") for e in events)

    results = []
    for hints in ("on", "off"):
        result_path = tmp_path / f"hints-{hints}.json"
        args = build_parser().parse_args(
            ["replay", str(path), "--speed", "10", "--queueing-hints", hints,
             "--result", str(result_path), "--chart", str(tmp_path / f"{hints}.png")]
        )  # fmt: skip
        assert await args.func(args) == 0
        assert (tmp_path / f"{hints}.png").read_bytes().startswith(b"\x89PNG")
        doc = json.loads(result_path.read_text())
        assert doc["errors"] == []
        assert doc["settled"] and doc["summary"]["pods"] == 5  # p1 appeared, then was deleted
        assert doc["summary"]["bound"] == 4 and doc["summary"]["maxTimeToSchedule"] is not None
        replayed = _outcome(
            list(doc["nodes"]),
            {k: (v["devices"], v["allocated"]) for k, v in doc["pools"].items()},
        )
        assert replayed == real
        results.append(result_path)
    capsys.readouterr()
    chart = tmp_path / "compare.png"
    args = build_parser().parse_args(
        ["replay", "--compare", str(results[0]), str(results[1]), "--chart", str(chart)]
    )
    assert await args.func(args) == 0
    table = capsys.readouterr().out
    assert "| setting queueingHints | True | False |" in table
    assert "Same final allocation" in table
    assert chart.read_bytes().startswith(b"\x89PNG")


async def test_record_command_writes_a_recording(plane: ControlPlane, tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    args = build_parser().parse_args(
        ["record", "--kubeconfig", str(plane.kubeconfig_path), "-o", str(path), "--duration", "1"]
    )
    task = asyncio.create_task(args.func(args))
    await asyncio.sleep(0.3)
    await create_class(plane.client())
    assert await task == 0
    kinds = {(e.type, e.rt.kind) for e in read_recording(path)}
    assert ("ADDED", "DeviceClass") in kinds


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "{tmp}/missing.jsonl"], "cannot read {tmp}/missing.jsonl"),
        (["replay", "{tmp}/bad.jsonl"], "cannot parse {tmp}/bad.jsonl"),
        (["replay", "{tmp}/empty.jsonl"], "is not a draplane recording"),
        (["replay"], "give a recording FILE"),
        (["replay", "--compare", "{tmp}/bad.jsonl", "{tmp}/bad.jsonl"], "is not a replay result"),
        (["record", "--kubeconfig", "{tmp}/bad.jsonl", "-o", "{tmp}/r"], "cannot use kubeconfig"),
        (["record", "--kubeconfig", "{tmp}/nope", "-o", "{tmp}/r"], "cannot use kubeconfig"),
    ],
)
def test_bad_input_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    (tmp_path / "empty.jsonl").write_text("")
    fill = {"tmp": str(tmp_path)}
    code = main([a.format(**fill) for a in argv])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and ": error: " in err
    assert message.format(**fill) in err
