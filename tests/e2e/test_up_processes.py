"""End to end: `draplane up --processes`, the API server, controller-manager, scheduler, driver
and nodes each in its own OS process over HTTPS, driven with the real kubectl; and
`draplane bench --processes` on a shrunk workload.

In 1.28 mode a representative set of examples/classic runs, then the scheduler is killed with
SIGKILL: `up` names it, exits non-zero and leaves no process behind. In 1.36 mode a structured
example runs and SIGTERM stops every process with exit code 0.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.rest import RESTClient
from draplane.controlplane.procstats import pid_alive
from draplane.testing.apistate import wait_for
from draplane.testing.commands import Command, Commands, free_port
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90.0
COMPONENTS = ("apiserver", "controller-manager", "scheduler", "driver", "nodes")
CLASSIC_EXAMPLES = {
    # manifest: the pods it runs
    "pod-with-template-claim.yaml": 1,
    "pod-with-several-claims.yaml": 1,
    "pod-with-external-claim.yaml": 1,
    "shared-claim.yaml": 2,
    "parameters.yaml": 1,
    "deployment-with-template-claim.yaml": 3,
}
STARTED = re.compile(r"^\[up\] started (\S+) \(pid (\d+)\)$")


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    started = Commands(tmp_path / "logs")
    try:
        yield started
    finally:
        await started.close()


def kubectl_for(kubeconfig: Path, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary("1.29") or kubectl_binary("1.32") or kubectl_binary("1.27")
    if binary is None:
        pytest.skip("no versioned kubectl binary installed")
    return Kubectl(binary, "1.29", kubeconfig, tmp_path / "kube-cache")


async def start_up(commands: Commands, tmp_path: Path, *args: str) -> tuple[Command, Path]:
    up = await commands.start(
        "up", "--processes", "--data-dir", str(tmp_path / "data"), "--port", str(free_port()),
        "--nodes", "3", "--store", "memory", *args,
    )  # fmt: skip
    line = await up.wait_for_line("kubeconfig: ", timeout=TIMEOUT)
    return up, Path(line.removeprefix("kubeconfig: "))


def started_pids(up: Command) -> dict[str, int]:
    """Component -> pid, from up's `[up] started NAME (pid N)` lines."""
    found = (STARTED.match(line) for line in up.stdout_lines)
    return {m[1]: int(m[2]) for m in found if m}


async def all_running(client: RESTClient, count: int) -> list[Obj] | None:
    pods = (await client.list(kinds.PODS, "default"))["items"]
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    return pods if len(pods) == count and set(phases) == {"Running"} else None


async def test_classic_examples_run_and_a_killed_scheduler_stops_up(
    commands: Commands, tmp_path: Path
) -> None:
    up, kubeconfig = await start_up(commands, tmp_path, "--kubernetes-version", "1.28")
    pids = started_pids(up)
    assert sorted(pids) == sorted(COMPONENTS)
    assert len(set(pids.values())) == len(COMPONENTS)
    # Every component logs on up's stdout, its lines prefixed with its name.
    assert any(line.startswith("[scheduler] ") for line in up.stdout_lines)
    kubectl = kubectl_for(kubeconfig, tmp_path)
    for name in CLASSIC_EXAMPLES:
        await kubectl.run("apply", "-f", str(ROOT / "examples" / "classic" / name))
    client = RESTClient.from_kubeconfig(kubeconfig)
    try:
        pods = await wait_for(
            lambda: all_running(client, sum(CLASSIC_EXAMPLES.values())),
            timeout=TIMEOUT,
            what="every example pod Running",
        )
        assert all(p["spec"]["nodeName"].startswith("node-") for p in pods)
        assert "pod-with-several-claims" in {meta.name(p) for p in pods}
        node = await client.get(kinds.NODES, pods[0]["spec"]["nodeName"])
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.28.0"
    finally:
        await client.close()

    os.kill(pids["scheduler"], signal.SIGKILL)
    async with asyncio.timeout(TIMEOUT):
        code = await up.proc.wait()
    assert code == 1
    assert f"component scheduler (pid {pids['scheduler']}) was killed by SIGKILL" in up.stderr
    assert [name for name, pid in pids.items() if pid_alive(pid)] == []


async def test_structured_mode_runs_an_example_and_sigterm_stops_every_process(
    commands: Commands, tmp_path: Path
) -> None:
    up, kubeconfig = await start_up(commands, tmp_path, "--kubernetes-version", "1.36")
    pids = started_pids(up)
    # Nothing allocates centrally in 1.36 mode: the nodes publish their own ResourceSlices.
    assert sorted(pids) == sorted(set(COMPONENTS) - {"driver"})
    example = ROOT / "examples" / "structured" / "pod-with-template-claim.yaml"
    await kubectl_for(kubeconfig, tmp_path).run("apply", "-f", str(example))
    client = RESTClient.from_kubeconfig(kubeconfig)
    try:
        [pod] = await wait_for(
            lambda: all_running(client, 1), timeout=TIMEOUT, what="the example pod Running"
        )
        claims = (await client.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
        assert [c["status"]["reservedFor"][0]["uid"] for c in claims] == [meta.uid(pod)]
        # The kubelet plugin in the nodes process writes status.devices with its token bound
        # to the node (before the pod runs).
        [claim] = claims
        results = claim["status"]["allocation"]["devices"]["results"]
        assert [(d["driver"], d["pool"], d["device"]) for d in claim["status"]["devices"]] == [
            (r["driver"], r["pool"], r["device"]) for r in results
        ]
        assert [c["type"] for c in claim["status"]["devices"][0]["conditions"]] == ["Ready"]
        assert results[0]["pool"] == pod["spec"]["nodeName"]
        node = await client.get(kinds.NODES, pod["spec"]["nodeName"])
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.36.0"
    finally:
        await client.close()
    code, _ = await up.stop(signal.SIGTERM)
    assert code == 0, up.stderr
    assert "Traceback" not in up.stderr
    assert [name for name, pid in pids.items() if pid_alive(pid)] == []


async def test_kubelet_dir_runs_a_kubelet_plugin_process_per_node(
    commands: Commands, tmp_path: Path
) -> None:
    # Unix socket paths are short (108 bytes): the kubelet directory sits directly in /tmp.
    kubelet_dir = Path(tempfile.mkdtemp(prefix="ku", dir="/tmp"))
    try:
        up, kubeconfig = await start_up(commands, tmp_path, "--kubelet-dir", str(kubelet_dir))
        pids = started_pids(up)
        plugins = [f"kubelet-plugin/node-{i}" for i in range(3)]
        assert sorted(pids) == sorted({*COMPONENTS, *plugins} - {"driver"})
        layout = await up.wait_for_line("kubelet dirs: ", timeout=TIMEOUT)
        assert layout.endswith("for nodes node-0, node-1, node-2")
        example = ROOT / "examples" / "structured" / "pod-with-template-claim.yaml"
        kubectl = kubectl_for(kubeconfig, tmp_path)
        await kubectl.run("apply", "-f", str(example))
        client = RESTClient.from_kubeconfig(kubeconfig)
        try:
            [pod] = await wait_for(
                lambda: all_running(client, 1), timeout=TIMEOUT, what="the example pod Running"
            )
            [claim] = (await client.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
        finally:
            await client.close()
        node = pod["spec"]["nodeName"]
        [result] = claim["status"]["allocation"]["devices"]["results"]
        logs = await kubectl.run("logs", meta.name(pod))
        assert f"GPU_DEVICE_0={result['device']}" in logs.splitlines()
        [spec] = (kubelet_dir / node / "cdi").iterdir()
        assert meta.uid(claim) in spec.name
        assert meta.uid(claim) in (kubelet_dir / node / "dra_manager_state").read_text()
        code, _ = await up.stop(signal.SIGTERM)
        assert code == 0, up.stderr
        assert [name for name, pid in pids.items() if pid_alive(pid)] == []
    finally:
        shutil.rmtree(kubelet_dir, ignore_errors=True)


async def test_bench_with_processes_reports_cpu_and_rss_per_process(
    commands: Commands, tmp_path: Path
) -> None:
    out = tmp_path / "bench"
    result = await commands.run(
        "bench", "classic-template", "--scale", "small", "--shrink", "10", "--processes",
        "--hints", "on", "--store", "memory", "--driver-workers", "3", "--output", str(out),
        timeout=240.0,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    [run] = orjson.loads((out / "result.json").read_bytes())
    assert (run["workload"], run["scheduled_pods"], run["transport"]) == (
        "classic-template",
        run["measured_pods"],
        "http",
    )
    processes = {*COMPONENTS, "bench"}
    assert set(run["process_cpu_s"]) == processes
    assert set(run["process_peak_rss_mib"]) == processes
    assert all(run["process_peak_rss_mib"][name] > 0 for name in processes)
    assert run["cpu_s"] == pytest.approx(sum(run["process_cpu_s"].values()), abs=0.01)
    assert run["peak_rss_mib"] == pytest.approx(sum(run["process_peak_rss_mib"].values()), 0.01)
    assert run["attempts_by_result"]["scheduled"] == 1.0
    assert run["writes_per_pod"] > 0
    assert 0 < run["server_write_p50_ms"] <= run["server_write_p99_ms"]
    assert set(run["process_loop_lag_p99_ms"]) == set(COMPONENTS)
    assert all(run["process_loop_lag_p99_ms"][name] is not None for name in COMPONENTS)
    assert run["watch_events_per_pod_all"] > 0 and run["watch_events_per_write"] >= 1
    assert "apiserver" in result.stdout and "CPU ms/pod" in result.stdout
    log = (out / "processes.log").read_text()
    assert log.startswith("[up] started apiserver")
    assert run["driver_workers"] == 3
    assert "driver driver.example.com: caches synced, starting 3 workers" in log
