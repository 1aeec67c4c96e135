"""`-v N` means what it means for klog: over one pod's whole lifecycle (claim created from a
template, allocated, pod bound, started, deleted, claim deallocated) the log holds start-up
lines at -v 0, adds what each component decided at -v 2, every object synced at -v 4 and every
API request at -v 6."""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import pytest

from draplane.api import errors, kinds, versions
from draplane.cli.logs import setup_logging
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod, make_template

pytestmark = pytest.mark.slow

TIMEOUT = 30.0

KINDS = {
    "start-up": r"^Starting (resource claim controller|garbage collector)",
    "decision": r"Created ResourceClaim|Successfully bound pod|allocated ResourceClaim|"
    r"started pod|stopped pod|deallocated ResourceClaim",
    "sync": r"finished syncing|: synced |Attempting to schedule pod",
    "request": r"^(GET|LIST|WATCH|POST|PUT|PATCH|DELETE) /api",
}

DECISIONS = [
    r"^Created ResourceClaim default/app-gpu-\w+ for pod default/app$",
    r"^driver driver\.example\.com: allocated ResourceClaim default/app-gpu-\w+ for node node-0$",
    r"^Successfully bound pod default/app to node node-0$",
    r"^node node-0: started pod default/app$",
    r"^node node-0: stopped pod default/app \(Succeeded\)$",
    r"^driver driver\.example\.com: deallocated ResourceClaim default/app-gpu-\w+$",
]


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def lifecycle_log(verbosity: int, data_dir: Path) -> list[str]:
    """The messages `draplane up -v <verbosity>` logs over one pod's lifecycle."""
    setup_logging(argparse.Namespace(verbosity=verbosity, log_format="text"))
    collect = Collect()
    logging.getLogger().addHandler(collect)
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(data_dir),
            port=0,
            nodes=1,
            store="memory",
            kubernetes_version=versions.CLASSIC,
        )
    )
    try:
        await plane.start()
        client = plane.client()
        await client.create(kinds.RESOURCE_CLAIM_TEMPLATES, make_template("gpu").obj(), "default")
        pod = make_pod("app").claim_template("gpu", "gpu").obj()
        del pod["metadata"]["uid"]
        await client.create(kinds.PODS, pod, "default")

        async def running() -> bool:
            live = await client.get(kinds.PODS, "app", "default")
            return (live.get("status") or {}).get("phase") == "Running"

        await wait_for(running, timeout=TIMEOUT, what="pod Running")
        claims = (await client.list(kinds.RESOURCE_CLAIMS, "default"))["items"]
        await client.delete(kinds.PODS, "app", "default")

        async def claims_gone() -> bool:
            for claim in claims:
                try:
                    await client.get(kinds.RESOURCE_CLAIMS, claim["metadata"]["name"], "default")
                except errors.StatusError as err:
                    assert errors.is_not_found(err)
                else:
                    return False
            return True

        await wait_for(claims_gone, timeout=TIMEOUT, what="claim deallocated and deleted")
    finally:
        await plane.stop()
        logging.getLogger().removeHandler(collect)
    return collect.lines


@pytest.mark.parametrize(
    ("verbosity", "present"),
    [
        pytest.param(0, {"start-up"}, id="v0"),
        pytest.param(2, {"start-up", "decision"}, id="v2"),
        pytest.param(4, {"start-up", "decision", "sync"}, id="v4"),
        pytest.param(6, {"start-up", "decision", "sync", "request"}, id="v6"),
    ],
)
async def test_verbosity_levels_over_a_pod_lifecycle(
    tmp_path: Path, verbosity: int, present: set[str]
) -> None:
    lines = await lifecycle_log(verbosity, tmp_path / "plane")

    kinds_seen = {
        kind for kind, pattern in KINDS.items() if any(re.search(pattern, line) for line in lines)
    }
    assert kinds_seen == present
    if "decision" in present:
        for decision in DECISIONS:
            assert [line for line in lines if re.search(decision, line)], decision
