"""Table-driven: for each hypothetical change, `draplane whatif` on the test cluster
(`build_cluster`, read live through its kubeconfig) predicts what the real control plane does
when the same change is applied for real on a second plane with the same cluster: the same pods
bound (controller-named pods counted by their generateName) and the same devices allocated per
pool."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from tests.explain.conftest import create_node, strip, wait_unschedulable
from tests.whatif.conftest import build_cluster

from draplane.api import meta, versions
from draplane.api.kinds import DEPLOYMENTS, PODS, RESOURCE_SLICES
from draplane.cli.main import build_parser
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.explain import Snapshot
from draplane.replay.run import stable_name
from draplane.testing.apistate import wait_for
from draplane.testing.clock import FakeClock
from draplane.testing.structured import make_device
from draplane.testing.workloadbuilders import make_deployment
from draplane.whatif import pool_usage, read_state
from draplane.whatif.changes import TAINT_KEY

TAINTED = "driver.example.com/node-a-whatif-0/dev-0"
RealChange = Callable[[ControlPlane], Awaitable[None]]
WEB = make_deployment("web").replicas(3).claim_template("gpu", "one-gpu", mode=versions.STRUCTURED)


async def _add_node(plane: ControlPlane, *devices: object) -> None:
    await create_node(plane.client(), "node-a-whatif-0", *(devices or ("dev-0", "dev-1")))


async def _add_three_nodes_and_web(plane: ControlPlane) -> None:
    for i in range(3):
        await create_node(plane.client(), f"node-a-whatif-{i}", "dev-0", "dev-1")
    await plane.client().create(DEPLOYMENTS, strip(WEB.obj()), "default")


async def _add_tainted_node(plane: ControlPlane) -> None:
    await _add_node(plane, make_device("dev-0").taint(TAINT_KEY, value="true"), "dev-1")


async def _move_pool(plane: ControlPlane) -> None:
    await plane.client().delete(RESOURCE_SLICES, "node-a-driver.example.com")
    await _add_node(plane)


@dataclass
class Case:
    name: str
    flags: list[str]
    real: RealChange
    bound: int
    manifests: tuple[dict[str, object], ...] = ()


CASES = [
    Case("add a node", ["--add-nodes", "1", "--like", "node-a"], _add_node, 4),
    Case(
        "add nodes and a Deployment",
        ["--add-nodes", "3", "--like", "node-a"],
        _add_three_nodes_and_web,
        7,
        (WEB.obj(),),
    ),
    Case(
        "taint a device of the added node",
        ["--add-nodes", "1", "--like", "node-a", "--taint-devices", TAINTED],
        _add_tainted_node,
        3,
    ),
    Case(
        "remove the pool, add a node",
        ["--remove-pool", "driver.example.com/node-a", "--add-nodes", "1", "--like", "node-a"],
        _move_pool,
        4,
    ),
]


def _result(state: Snapshot) -> tuple[Counter[str], dict[str, tuple[int, int]]]:
    bound = Counter(stable_name(p) for p in state.kind(PODS).values() if meta.node_name(p))
    pools = {f"{d}/{p}": (u.devices, u.allocated) for (d, p), u in pool_usage(state).items()}
    return bound, pools


async def _settle_for_real(plane: ControlPlane, bound: int) -> Snapshot:
    """Step the fake clock until `bound` pods are bound and the rest were tried."""
    client, clock = plane.client(), plane.clock
    assert isinstance(clock, FakeClock)

    async def done() -> Snapshot | None:
        clock.step(1.0)
        state = await read_state(client)
        pods = list(state.kind(PODS).values())
        if sum(1 for p in pods if meta.node_name(p)) == bound:
            return state
        return None

    result: Snapshot = await wait_for(done, timeout=30, what=f"{bound} pods bound for real")
    return result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_whatif_predicts_the_real_outcome(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case
) -> None:
    await build_cluster(plane)
    await wait_unschedulable(plane, "p3")
    argv = ["whatif", "--kubeconfig", str(plane.kubeconfig_path), "-o", "json", *case.flags]
    if case.manifests:
        manifest = tmp_path / "batch.yaml"
        manifest.write_text(yaml.safe_dump_all(list(case.manifests)))
        argv += ["--apply", str(manifest)]
    args = build_parser().parse_args(argv)
    assert await args.func(args) == 0
    captured = capsys.readouterr()
    sys.stderr.write(captured.err)
    doc = json.loads(captured.out)
    assert doc["settled"]

    real = ControlPlane(ControlPlaneConfig(**vars(plane.config)), clock=FakeClock())
    await real.start()
    try:
        await build_cluster(real)
        await case.real(real)
        real_bound, real_pools = _result(await _settle_for_real(real, case.bound))
    finally:
        await real.stop()

    whatif_pools = {
        f"{p['driver']}/{p['pool']}": (p["after"]["devices"], p["after"]["allocated"])
        for p in doc["pools"]
        if p["after"]
    }
    # The same pools with the same allocation counts; which of several equally good nodes
    # took a device is the scheduler's tie-break, so counts are compared as a multiset.
    assert whatif_pools.keys() == real_pools.keys()
    assert sorted(whatif_pools.values()) == sorted(real_pools.values())
    assert whatif_pools.get("driver.example.com/node-a") == real_pools.get(
        "driver.example.com/node-a"
    )
    whatif_bound = {"default/p0", "default/p1"} | {r["pod"] for r in doc["wouldRun"]}
    named = {p for p in whatif_bound if not p.startswith("default/web-")}
    assert named == {p for p in real_bound if not p.startswith("default/web-")}
    assert len(whatif_bound) == sum(real_bound.values()) == case.bound
