"""`draplane whatif` against a live 1.36 control plane: its answer matches what the real
control plane does when the same change is applied for real on a second plane (pods bound,
devices allocated per pool), and the cluster it read is never written (no resourceVersion
changes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from tests.explain.conftest import create_node, create_pod, wait_bound, wait_unschedulable
from tests.whatif.conftest import build_cluster, template_pod

from draplane.api import meta
from draplane.api.kinds import PODS
from draplane.cli.main import build_parser
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.explain import Snapshot
from draplane.testing.clock import FakeClock
from draplane.whatif import pool_usage, read_state


async def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    args = build_parser().parse_args(list(argv))
    code: int = await args.func(args)
    captured = capsys.readouterr()
    sys.stderr.write(captured.err)
    return code, captured.out


def _versions(state: Snapshot) -> dict[tuple[str, str, str], str]:
    return {
        (rt.kind, *key): meta.resource_version(obj)
        for rt, objs in state.objects.items()
        for key, obj in objs.items()
    }


async def test_whatif_matches_applying_the_change_for_real(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    await build_cluster(plane)
    await wait_unschedulable(plane, "p3")
    before = _versions(await read_state(plane.client()))
    manifest = tmp_path / "batch.yaml"
    manifest.write_text(yaml.safe_dump_all([template_pod("p4"), template_pod("p5")]))
    chart = tmp_path / "chart.png"
    code, out = await _run(
        capsys, "whatif", "--kubeconfig", str(plane.kubeconfig_path), "--add-nodes", "1",
        "--like", "node-a", "--apply", str(manifest), "-o", "json", "--chart", str(chart),
    )  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    assert _versions(await read_state(plane.client())) == before  # nothing written
    assert chart.read_bytes().startswith(b"\x89PNG")

    # The same change for real, on a second plane with the same cluster.
    real = ControlPlane(ControlPlaneConfig(**vars(plane.config)), clock=FakeClock())
    await real.start()
    try:
        await build_cluster(real)
        await create_node(real.client(), "node-a-whatif-0", "dev-0", "dev-1")
        for name in ("p2", "p3"):
            await wait_bound(real, name)
        for name in ("p4", "p5"):
            await create_pod(real.client(), name, pod=template_pod(name))
        await wait_unschedulable(real, "p5")
        state = await read_state(real.client())
    finally:
        await real.stop()

    would_run = {r["pod"] for r in doc["wouldRun"]}
    bound_for_real = {
        meta.namespaced_key(p) for p in state.kind(PODS).values() if meta.node_name(p)
    }
    assert would_run == bound_for_real - {"default/p0", "default/p1"}
    assert len(would_run) == 2 and doc["pendingCount"] == 2
    real_pools = {f"{d}/{p}": (u.devices, u.allocated) for (d, p), u in pool_usage(state).items()}
    whatif_pools = {
        f"{p['driver']}/{p['pool']}": (p["after"]["devices"], p["after"]["allocated"])
        for p in doc["pools"]
    }
    assert (
        whatif_pools
        == real_pools
        == {
            "driver.example.com/node-a": (2, 2),
            "driver.example.com/node-a-whatif-0": (2, 2),
        }
    )
    # p4 and p5 are alike (the same spec): explained once.
    (entry,) = doc["pending"]
    assert (entry["pod"], entry["alike"]) == ("default/p4", ["default/p5"])
    assert any("[NotEnoughDevices]" in r for r in entry["reasons"]), entry["reasons"]
