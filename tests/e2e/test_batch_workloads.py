"""End to end: Jobs and CronJobs on the whole control plane (kubelet, scheduler, claim
controller, example driver with 2 devices on one node), one kubectl scenario per version.

A Job of 4 completions and parallelism 2 whose pods each get a claim from a template can only
finish if the claims of finished pods are deleted and their devices freed for the next pods.
Deleting a CronJob, Job or both with each propagation policy finishes by itself: pods stop,
claims are deallocated and go, the tracking finalizers are removed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controllers import job_util as ju
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.testing.apistate import wait_for
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "classic"
TIMEOUT = 30.0


@pytest.fixture
def plane_config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=1,
        store="memory",
        drivers=[DriverSpec(devices_per_node=2)],
        kubernetes_version=versions.CLASSIC,
    )


def kubectl(plane: ControlPlane, version: str, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary(version)
    if binary is None:
        pytest.skip(f"kubectl.{version} is not installed")
    return Kubectl(binary, version, plane.kubeconfig_path, tmp_path / "kube-cache")


def example(name: str) -> list[Obj]:
    return list(yaml.safe_load_all((EXAMPLES / name).read_text()))


async def listed(client: Client, rt: kinds.ResourceType) -> list[Obj]:
    items: list[Obj] = (await client.list(rt, "default"))["items"]
    return items


async def finished(client: Client, name: str, type_: str = ju.COMPLETE) -> Obj:
    async def probe() -> Obj | None:
        job = await client.get(kinds.JOBS, name, "default")
        return job if ju.find_condition(job, type_) else None

    return await wait_for(probe, timeout=TIMEOUT, what=f"job {name} {type_}")


async def nothing_left(client: Client) -> None:
    async def probe() -> bool:
        for rt in (kinds.CRON_JOBS, kinds.JOBS, kinds.PODS, kinds.RESOURCE_CLAIMS):
            if await listed(client, rt):
                return False
        return True

    await wait_for(probe, timeout=TIMEOUT, what="every object gone")


async def test_job_with_claim_template_completes(plane: ControlPlane, tmp_path: Path) -> None:
    client = plane.client()
    manifest = (EXAMPLES / "job-with-claim-template.yaml").read_text()
    run = kubectl(plane, "1.27", tmp_path).run
    await run("apply", "-f", "-", stdin=manifest)
    job = await finished(client, "job-with-claims")
    assert "4/4" in (await run("get", "job", "job-with-claims")).splitlines()[1].split()
    status = job["status"]
    assert (status["succeeded"], status["failed"], status["active"]) == (4, 0, 0)
    pods = await listed(client, kinds.PODS)
    assert sorted(p["status"]["phase"] for p in pods) == ["Succeeded"] * 4
    assert all(not meta.finalizers(p) for p in pods)
    # Each pod had a claim of its own; all are deleted now that the pods are done.
    claims = {s["resourceClaimName"] for p in pods for s in p["status"]["resourceClaimStatuses"]}
    assert len(claims) == 4

    async def claims_gone() -> bool:
        return not await listed(client, kinds.RESOURCE_CLAIMS)

    await wait_for(claims_gone, timeout=TIMEOUT, what="claims deleted")


async def test_create_job_from_cronjob(plane: ControlPlane, tmp_path: Path) -> None:
    client = plane.client()
    run = kubectl(plane, "1.29", tmp_path).run
    await run("apply", "-f", str(EXAMPLES / "cronjob.yaml"))
    await run("create", "job", "--from=cronjob/hourly", "now")
    job = await finished(client, "now")
    cronjob = await client.get(kinds.CRON_JOBS, "hourly", "default")
    assert (meta.controller_ref(job) or {}).get("uid") == meta.uid(cronjob)
    assert meta.annotations(job)["cronjob.kubernetes.io/instantiate"] == "manual"

    async def seen() -> Obj | None:
        live = await client.get(kinds.CRON_JOBS, "hourly", "default")
        return live if (live.get("status") or {}).get("lastSuccessfulTime") else None

    live = await wait_for(seen, timeout=TIMEOUT, what="lastSuccessfulTime")
    assert live["status"]["lastSuccessfulTime"] == job["status"]["completionTime"]
    assert "lastScheduleTime" not in live["status"]


def long_running_job(name: str, owner: Obj | None = None) -> Obj:
    """The example Job with pods that run until deleted."""
    job = next(d for d in example("job-with-claim-template.yaml") if d["kind"] == "Job")
    job["metadata"]["name"] = name
    del job["spec"]["template"]["metadata"]["annotations"]
    if owner is not None:
        job["metadata"]["ownerReferences"] = [
            meta.owner_reference(owner, controller=True, block_owner_deletion=True)
        ]
    return job


async def running_pods(client: Client, count: int) -> list[Obj]:
    async def probe() -> list[Obj] | None:
        pods = [p for p in await listed(client, kinds.PODS) if ju.phase(p) == "Running"]
        claims = await listed(client, kinds.RESOURCE_CLAIMS)
        reserved = [c for c in claims if (c.get("status") or {}).get("reservedFor")]
        return pods if len(pods) == count and len(reserved) == count else None

    return await wait_for(probe, timeout=TIMEOUT, what=f"{count} pods running with claims")


async def test_kubectl_delete_job_in_the_foreground(plane: ControlPlane, tmp_path: Path) -> None:
    client = plane.client()
    template = example("job-with-claim-template.yaml")[0]
    await client.create(kinds.RESOURCE_CLAIM_TEMPLATES, template, "default")
    await client.create(kinds.JOBS, long_running_job("forever"), "default")
    await running_pods(client, 2)
    # kubectl waits until the Job is gone: Foreground means pods and claims went first.
    await kubectl(plane, "1.32", tmp_path).run("delete", "job", "forever", "--cascade=foreground")
    await nothing_left(client)


@pytest.mark.parametrize("policy", ["Foreground", "Background", "Orphan"])
async def test_delete_cronjob_cascades(plane: ControlPlane, policy: str) -> None:
    client = plane.client()
    template = example("job-with-claim-template.yaml")[0]
    await client.create(kinds.RESOURCE_CLAIM_TEMPLATES, template, "default")
    cronjob = next(iter(example("cronjob.yaml")))
    cronjob = await client.create(kinds.CRON_JOBS, cronjob, "default")
    await client.create(kinds.JOBS, long_running_job("from-cron", cronjob), "default")
    await running_pods(client, 2)
    await client.delete(kinds.CRON_JOBS, "hourly", "default", propagation_policy=policy)
    if policy == "Orphan":

        async def orphaned() -> Obj | None:
            try:
                await client.get(kinds.CRON_JOBS, "hourly", "default")
                return None
            except errors.StatusError:
                job = await client.get(kinds.JOBS, "from-cron", "default")
                return job if not meta.owner_references(job) else None

        await wait_for(orphaned, timeout=TIMEOUT, what="job orphaned")
        assert len(await running_pods(client, 2)) == 2
        await client.delete(kinds.JOBS, "from-cron", "default", propagation_policy="Background")
    await nothing_left(client)


async def test_orphaned_job_pods_lose_the_tracking_finalizer(plane: ControlPlane) -> None:
    client = plane.client()
    template = example("job-with-claim-template.yaml")[0]
    await client.create(kinds.RESOURCE_CLAIM_TEMPLATES, template, "default")
    await client.create(kinds.JOBS, long_running_job("forever"), "default")
    await running_pods(client, 2)
    await client.delete(kinds.JOBS, "forever", "default", propagation_policy="Orphan")

    async def released() -> list[Obj] | None:
        if await listed(client, kinds.JOBS):
            return None
        pods = await listed(client, kinds.PODS)
        free = all(not meta.owner_references(p) and not meta.finalizers(p) for p in pods)
        return pods if free else None

    pods = await wait_for(released, timeout=TIMEOUT, what="pods orphaned and untracked")
    assert [ju.phase(p) for p in pods] == ["Running", "Running"]
    for pod in pods:
        await client.delete(kinds.PODS, meta.name(pod), "default")
    await nothing_left(client)
