"""`draplane dump` and `draplane whatif --from-dump`: a dump (JSON lines or YAML) forks to the
same answer as the live API server; bad input is one error line and exit code 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.explain.conftest import wait_unschedulable
from tests.whatif.conftest import build_cluster

from draplane.api import versions
from draplane.cli.main import build_parser, main
from draplane.cli.process import CommandError
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.testing.builders import make_node
from draplane.whatif import read_dump, read_state


async def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    args = build_parser().parse_args(list(argv))
    code: int = await args.func(args)
    captured = capsys.readouterr()
    sys.stderr.write(captured.err)
    return code, captured.out


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml"])
async def test_dump_then_whatif_from_the_dump(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str
) -> None:
    await build_cluster(plane)
    await wait_unschedulable(plane, "p3")
    dump = tmp_path / f"cluster{suffix}"
    code, _ = await _run(
        capsys, "dump", "--kubeconfig", str(plane.kubeconfig_path), "-o", str(dump)
    )
    assert code == 0
    live = await read_state(plane.client())
    assert {rt: set(objs) for rt, objs in read_dump(dump).objects.items()} == {
        rt: set(objs) for rt, objs in live.objects.items()
    }
    code, out = await _run(
        capsys, "whatif", "--from-dump", str(dump), "--add-nodes", "1", "--like", "node-a",
        "-o", "json",
    )  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    assert {r["pod"] for r in doc["wouldRun"]} == {"default/p2", "default/p3"}
    assert doc["pendingCount"] == 0
    code, out = await _run(capsys, "whatif", "--from-dump", str(dump), "--remove-pool", "node-a")
    assert code == 0
    assert "| driver.example.com | node-a | 2/2 | - |" in out
    assert "- default/p2\n  - 1 node(s): [NoResourceSliceForDriver] claim default/p2-gpu-" in out


def _dump_with_one_node(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    node = make_node("node-a").obj()
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Node", **node}) + "\n")
    return path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["whatif", "--from-dump", "{tmp}/missing.jsonl"], "cannot read {tmp}/missing.jsonl"),
        (["whatif", "--from-dump", "{tmp}/bad.jsonl"], "cannot parse {tmp}/bad.jsonl"),
        (["whatif", "--kubeconfig", "{tmp}/missing.kubeconfig"], "cannot use kubeconfig"),
        (["whatif", "--kubeconfig", "{tmp}/bad.jsonl"], "cannot use kubeconfig"),
        (["dump", "--kubeconfig", "{tmp}/bad.jsonl", "-o", "{tmp}/x"], "cannot use kubeconfig"),
        (["whatif", "--from-dump", "{one}", "--add-nodes", "2"], "--add-nodes needs --like"),
        (["whatif", "--from-dump", "{one}", "--add-nodes", "1", "--like", "nope"], "node nope"),
        (["whatif", "--from-dump", "{one}", "--remove-pool", "p"], "no ResourceSlice of pool p"),
        (["whatif", "--from-dump", "{one}", "--taint-devices", "a/b"], "DRIVER/POOL/DEVICE"),
        (["whatif", "--from-dump", "{one}", "--apply", "{tmp}/missing.yaml"], "cannot read"),
    ],
)
def test_bad_input_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    one = _dump_with_one_node(tmp_path)
    fill = {"tmp": str(tmp_path), "one": str(one)}
    code = main([a.format(**fill) for a in argv])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and ": error: " in err
    assert message.format(**fill) in err


async def test_a_server_without_resource_v1_is_an_error(tmp_path: Path) -> None:
    """A 1.28 API server serves no resource.k8s.io/v1: whatif and dump refuse, rather than
    read it as a cluster without claims."""
    config = ControlPlaneConfig(
        port=0, nodes=0, drivers=[], store="memory", kubernetes_version=versions.CLASSIC
    )
    classic = ControlPlane(config)
    await classic.start()
    try:
        for argv in (["whatif"], ["dump", "-o", str(tmp_path / "d.jsonl")]):
            args = build_parser().parse_args([*argv, "--kubeconfig", str(classic.kubeconfig_path)])
            with pytest.raises(CommandError, match=r"does not serve resource\.k8s\.io/v1"):
                await args.func(args)
    finally:
        await classic.stop()
