"""`draplane explain pod NS/NAME` against a live 1.36 control plane over HTTPS (its kubeconfig):
exit codes, `-o json` with the fixes under `fixes`, many nodes failing alike read as one group,
the kubeconfig found as kubectl finds it, and `kubectl draplane ...` through kubectl's plugin
mechanism."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from tests.explain.conftest import (
    create_claim,
    create_class,
    create_node,
    create_pod,
    wait_bound,
    wait_unschedulable,
)
from tests.explain.test_reasons import class_selector_false, not_enough_devices

from draplane.cli.explain import find_kubeconfig, split_target
from draplane.cli.main import build_parser
from draplane.cli.process import CommandError
from draplane.controlplane import ControlPlane
from draplane.testing.builders import make_node
from draplane.testing.structured import make_structured_claim


async def _run(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str]:
    """The command's exit code and stdout (stderr stays in `capsys`)."""
    args = build_parser().parse_args(["explain", *argv, "--kubeconfig", str(plane.kubeconfig_path)])
    code: int = await args.func(args)
    captured = capsys.readouterr()
    sys.stderr.write(captured.err)
    return code, captured.out


async def test_exit_2_with_a_verified_fix_and_json(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    await not_enough_devices(plane)
    await wait_unschedulable(plane, "p")
    code, out = await _run(plane, capsys, "pod", "default/p")
    assert code == 2
    assert "[NotEnoughDevices] claim default/c request gpu: wanted 2, free 1" in out
    assert "[verified] release claim default/held" in out
    code, out = await _run(plane, capsys, "pod", "default/p", "-o", "json")
    doc = json.loads(out)
    assert (code, doc["exitCode"], doc["schedulable"]) == (2, 2, False)
    assert doc["fixes"] and all(f["verified"] for f in doc["fixes"])
    release = next(f for f in doc["fixes"] if f["summary"].startswith("release claim"))
    assert {(c["action"], c["kind"], c["name"]) for c in release["changes"]} == {
        ("delete", "Pod", "holder"),
        ("delete", "ResourceClaim", "held"),
    }
    (group,) = doc["nodeGroups"]
    assert group["nodes"] == ["node-a"]
    assert group["reasons"][0]["data"]["heldBy"] == ["default/held"]


async def test_exit_3_without_a_fix(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    await class_selector_false(plane)
    await wait_unschedulable(plane, "p")
    code, out = await _run(plane, capsys, "pod", "p", "-n", "default")
    assert code == 3
    assert "[SelectorFalse]" in out and "No verified fix found." in out


async def test_exit_0_when_bound_and_1_on_error(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    client = plane.client()
    await create_class(client)
    await create_node(client, "node-a", "dev-0")
    await create_claim(client, make_structured_claim("c").request("gpu", "gpu").obj())
    await create_pod(client, "p", claim="c")
    await wait_bound(plane, "p")
    code, out = await _run(plane, capsys, "pod", "default/p")
    assert (code, out) == (0, "Pod default/p:\n  scheduled on node node-a\n")
    code, _ = await _run(plane, capsys, "pod", "default/missing")
    assert code == 1
    assert 'pods "missing" not found' in capsys.readouterr().err


async def test_many_nodes_failing_alike_read_as_one_group(
    plane: ControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    client = plane.client()
    await create_class(client)
    for i in range(60):
        await create_node(client, f"node-{i:02}", "dev-0")
    for i in range(3):
        await create_node(
            client, f"cordoned-{i}", node=make_node(f"cordoned-{i}").unschedulable().obj()
        )
    await create_claim(client, make_structured_claim("c").request("gpu", "gpu", count=2).obj())
    await create_pod(client, "p", claim="c")
    await wait_unschedulable(plane, "p")
    code, out = await _run(plane, capsys, "pod", "default/p")
    assert code == 2, out
    lines = out.splitlines()
    assert "  60 nodes (node-00, node-01, node-02, node-03, node-04 and 55 more):" in lines
    assert "  3 nodes (cordoned-0, cordoned-1, cordoned-2):" in lines
    assert sum("[NotEnoughDevices]" in line for line in lines) == 1
    assert len(lines) < 15


def test_kubeconfig_found_as_kubectl_finds_it(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    second.write_text("")
    env = {"KUBECONFIG": os.pathsep.join([str(first), str(second)]), "HOME": "/home/x"}
    assert find_kubeconfig("flag.yaml", env) == "flag.yaml"
    assert find_kubeconfig("", env) == str(second)
    assert find_kubeconfig("", {"HOME": "/home/x"}) == "/home/x/.kube/config"


@pytest.mark.parametrize(
    ("target", "namespace", "want"),
    [("ns/p", "", ("ns", "p")), ("p", "", ("default", "p")), ("p", "other", ("other", "p"))],
)
def test_split_target(target: str, namespace: str, want: tuple[str, str]) -> None:
    assert split_target(target, namespace) == want


def test_split_target_rejects_bad_names() -> None:
    with pytest.raises(CommandError):
        split_target("a/b/c", "")


def test_kubectl_plugin_entry_point_is_declared() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert 'kubectl-draplane = "draplane.cli.main:main"' in pyproject


async def test_kubectl_draplane_explain(plane: ControlPlane, tmp_path: Path) -> None:
    """kubectl finds `kubectl-draplane` on PATH and runs it with the rest of its arguments."""
    kubectl = "/usr/bin/kubectl"
    if not Path(kubectl).exists():
        pytest.skip("no kubectl on this machine")
    await not_enough_devices(plane)
    await wait_unschedulable(plane, "p")
    plugin = tmp_path / "bin" / "kubectl-draplane"
    plugin.parent.mkdir()
    plugin.write_text(f'#!/bin/sh\nexec {sys.executable} -m draplane.cli.main "$@"\n')
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    env = {
        **os.environ,
        "PATH": f"{plugin.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(plane.kubeconfig_path),
    }
    proc = await asyncio.create_subprocess_exec(
        kubectl, "draplane", "explain", "pod", "default/p", "-o", "json",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 2, err.decode()
    assert json.loads(out)["fixes"]
