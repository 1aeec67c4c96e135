"""A run whose pods can never be scheduled fails with a clear error instead of hanging."""

from __future__ import annotations

from dataclasses import replace

import pytest

from draplane.api import kinds
from draplane.bench.runner import BenchError, RunConfig, Timeouts, run_once
from draplane.bench.workloads import workload


@pytest.mark.slow
async def test_unschedulable_measured_pods_fail_after_the_stall_timeout() -> None:
    # One node with 20 devices, all taken by the init pods: the measured pod can never fit.
    shape = replace(workload("classic-template", "small"), nodes=1, init_pods=20, measured_pods=1)
    config = RunConfig(
        workload=shape,
        scale="small",
        store="memory",
        timeouts=Timeouts(base=30.0, per_pod=1.0, stall=1.5, stall_per_pod=0.0, settle=5.0),
    )

    with pytest.raises(BenchError, match=r"only 0 of 1 measured pods bound") as failed:
        await run_once(config)

    assert "scheduler pending pods" in str(failed.value)


async def test_run_once_reports_the_measured_phase_only() -> None:
    shape = replace(workload("basic", "small"), nodes=2, init_pods=3, measured_pods=4)

    result = await run_once(RunConfig(workload=shape, scale="small", store="memory"))

    figures = result.figures
    assert (figures["init_pods"], figures["measured_pods"], figures["scheduled_pods"]) == (3, 4, 4)
    assert sum(result.throughput_series) == len(result.latencies) == 4
    # Basic pods: create and binding are the only scheduling writes (kubelet status excluded).
    assert figures["writes_by_resource_verb"]["create pods"] == 1.0
    assert figures["writes_by_resource_verb"][f"create {kinds.PODS.resource}/binding"] == 1.0
    assert figures["writes_per_pod"] == 2.0
    assert figures["kubelet_writes_per_pod"] == 1.0
