"""`draplane up --disable`: the control plane without some of its components, for Kubernetes'
own to take their place. Without the scheduler a pod stays unbound and no scheduler writes to
the API, while a Binding made by someone else (another scheduler) is run by the nodes. Without
the resource claim controller (or the whole controller-manager) a pod's claim template gives no
claim, while a claim written by someone else (upstream's controller) is allocated, and the pod
scheduled and run, by draplane's scheduler, driver and nodes. A name that is not a component is
refused, by `up` with argparse's exit code 2 and the valid names."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
import yaml

from draplane.api import auth, kinds, meta
from draplane.api.errors import StatusError
from draplane.api.meta import Obj
from draplane.cli.main import main
from draplane.client.rest import RESTClient
from draplane.controllers.manager import CONTROLLER_NAMES, enabled_controllers
from draplane.controlplane import ControlPlane, ControlPlaneConfig, Disabled, disable
from draplane.testing.apistate import events_for, wait_for
from draplane.testing.builders import make_pod
from draplane.testing.commands import Commands

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "examples" / "structured" / "pod-with-template-claim.yaml"
)
POD = "pod-with-a100"
SETTLE_SECONDS = 1.5
"""How long a pod is watched for what a disabled component would have done: the in-process
scheduler and claim controller act on a new pod within tens of milliseconds."""
CLAIM_CONTROLLER = auth.controller_user("resource-claim-controller").name


def _strip(obj: Obj) -> Obj:
    obj["metadata"].pop("uid", None)  # builders set uids; the API server assigns its own
    return obj


@contextlib.asynccontextmanager
async def _plane(tmp_path: Path, disabled: Disabled) -> AsyncIterator[ControlPlane]:
    """A started control plane (1.36, one node) without `disabled`, auditing every request."""
    config = ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=1,
        store="memory",
        audit_log_path=str(tmp_path / "audit.log"),
        disabled=disabled,
    )
    plane = ControlPlane(config)
    await plane.start()
    try:
        yield plane
    finally:
        await plane.stop()


def _users(tmp_path: Path) -> set[str]:
    """Every user that sent a request, from the audit log."""
    lines = (tmp_path / "audit.log").read_bytes().splitlines()
    return {orjson.loads(line)["user"]["username"] for line in lines}


async def _running_on(plane: ControlPlane, name: str) -> str:
    async def running() -> str | None:
        pod = await plane.client().get(kinds.PODS, name, "default")
        if (pod.get("status") or {}).get("phase") != "Running":
            return None
        return str(pod["spec"]["nodeName"])

    return await wait_for(running, what=f"pod {name} running")


async def test_without_the_scheduler_a_pod_waits_for_another_binder(tmp_path: Path) -> None:
    async with _plane(tmp_path, disable.parse("scheduler")) as plane:
        admin = plane.client()
        pod = await admin.create(kinds.PODS, _strip(make_pod("p").obj()), "default")
        await asyncio.sleep(SETTLE_SECONDS)
        waiting = await admin.get(kinds.PODS, "p", "default")
        scheduler_events = [
            e
            for e in await events_for(admin, pod)
            if e["source"].get("component") == "default-scheduler"
        ]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "p", "namespace": "default"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-0"},
        }
        await admin.create(kinds.PODS, binding, "default", subresource="binding", name="p")
        node = await _running_on(plane, "p")
        components = set(plane.components)

    assert "scheduler" not in components
    assert {"controller-manager", "nodes"} <= components
    assert "nodeName" not in waiting["spec"]
    assert not (waiting.get("status") or {}).get("conditions")
    assert scheduler_events == []
    assert auth.SCHEDULER not in _users(tmp_path)
    assert node == "node-0"


@pytest.mark.parametrize(
    ("disabled", "manager_runs"),
    [
        pytest.param("resourceclaim-controller", True, id="resourceclaim-controller"),
        pytest.param("controller-manager", False, id="controller-manager"),
    ],
)
async def test_without_the_claim_controller_another_one_writes_the_claim(
    tmp_path: Path, disabled: str, manager_runs: bool
) -> None:
    async with _plane(tmp_path, disable.parse(disabled)) as plane:
        admin = plane.client()
        for doc in yaml.safe_load_all(EXAMPLE.read_text()):
            await admin.create(kinds.for_kind(doc["apiVersion"], doc["kind"]), doc, "default")
        await asyncio.sleep(SETTLE_SECONDS)
        claims_before = (await admin.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
        waiting = await admin.get(kinds.PODS, POD, "default")
        # What upstream's resourceclaim-controller does: the claim from the template, owned by
        # the pod, then its name in the pod's status.
        template = await admin.get(kinds.RESOURCE_CLAIM_TEMPLATES_V1, "single-a100", "default")
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": f"{POD}-gpu-abcde",
                "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": POD,
                        "uid": meta.uid(waiting),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": template["spec"]["spec"],
        }
        await admin.create(kinds.RESOURCE_CLAIMS_V1, claim, "default")
        statuses = [{"name": "gpu", "resourceClaimName": f"{POD}-gpu-abcde"}]
        await admin.patch(
            kinds.PODS,
            POD,
            {"status": {"resourceClaimStatuses": statuses}},
            "default",
            subresource="status",
        )
        node = await _running_on(plane, POD)
        allocated = await admin.get(kinds.RESOURCE_CLAIMS_V1, f"{POD}-gpu-abcde", "default")
        components = set(plane.components)

    assert ("controller-manager" in components) is manager_runs
    assert "scheduler" in components
    assert claims_before == []
    assert not (waiting.get("status") or {}).get("resourceClaimStatuses")
    assert "nodeName" not in waiting["spec"]
    assert CLAIM_CONTROLLER not in _users(tmp_path)
    assert (auth.CONTROLLER_MANAGER in _users(tmp_path)) is manager_runs
    results = allocated["status"]["allocation"]["devices"]["results"]
    assert [r["pool"] for r in results] == [node]
    assert [r["uid"] for r in allocated["status"]["reservedFor"]] == [meta.uid(waiting)]


async def test_the_claim_controller_runs_unless_disabled(tmp_path: Path) -> None:
    """The counterpart: with nothing disabled the same pod gets its claim and runs."""
    async with _plane(tmp_path, disable.NOTHING) as plane:
        admin = plane.client()
        for doc in yaml.safe_load_all(EXAMPLE.read_text()):
            await admin.create(kinds.for_kind(doc["apiVersion"], doc["kind"]), doc, "default")
        await _running_on(plane, POD)
        pod = await admin.get(kinds.PODS, POD, "default")

    (status,) = pod["status"]["resourceClaimStatuses"]
    assert status["resourceClaimName"].startswith(f"{POD}-gpu-")
    assert CLAIM_CONTROLLER in _users(tmp_path)


def _all_but(*names: str) -> tuple[str, ...]:
    return tuple(n for n in CONTROLLER_NAMES if n not in names)


@pytest.mark.parametrize(
    ("value", "names", "controllers"),
    [
        pytest.param("", (), CONTROLLER_NAMES, id="nothing"),
        pytest.param("scheduler", ("scheduler",), CONTROLLER_NAMES, id="scheduler"),
        pytest.param(
            " scheduler , resourceclaim-controller ,",
            ("scheduler", "resourceclaim-controller"),
            _all_but("resourceclaim-controller"),
            id="scheduler-and-claim-controller",
        ),
        pytest.param(
            "garbagecollector,job-controller,resource-claim-controller",
            ("garbage-collector-controller", "job-controller", "resourceclaim-controller"),
            _all_but("garbage-collector-controller", "job-controller", "resourceclaim-controller"),
            id="upstream-aliases",
        ),
        pytest.param("controller-manager", ("controller-manager",), (), id="controller-manager"),
    ],
)
def test_parse(value: str, names: tuple[str, ...], controllers: tuple[str, ...]) -> None:
    disabled = disable.parse(value)
    # What `up --processes` passes to `draplane controller-manager --controllers`.
    flag = disabled.controllers_flag().split(",")

    assert disabled.names == frozenset(names)
    assert disabled.controllers() == controllers
    assert enabled_controllers(flag) == controllers


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("kube-proxy", id="unknown"),
        pytest.param("scheduler,resourceclaim", id="one-of-two"),
        pytest.param("kube-scheduler", id="binary-name"),
    ],
)
def test_up_refuses_a_name_that_is_not_a_component(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["up", "--disable", value])
    err = capsys.readouterr().err

    assert exited.value.code == 2
    assert "argument --disable: cannot disable" in err
    assert "(valid: " + ", ".join(disable.COMPONENTS) + ")" in err
    with pytest.raises(ValueError, match="not a draplane component"):
        Disabled.of(value.split(","))


async def test_up_prints_what_is_disabled(tmp_path: Path) -> None:
    commands = Commands(tmp_path / "logs")
    try:
        up = await commands.start(
            "up",
            "--data-dir",
            str(tmp_path / "data"),
            "--store",
            "memory",
            "--port",
            "0",
            "--nodes",
            "1",
            "--disable",
            "resourceclaim-controller,scheduler",
        )
        line = await up.wait_for_line("disabled: ", timeout=60.0)
        code, _ = await up.stop()
    finally:
        await commands.close()

    assert line == (
        "disabled: scheduler, resourceclaim-controller (run your own against the kubeconfig)"
    )
    assert up.stdout_lines[-2].startswith("draplane is up: ")
    assert code == 0


@pytest.mark.slow
async def test_up_processes_starts_no_disabled_component(tmp_path: Path) -> None:
    """`up --processes --disable scheduler,resourceclaim-controller`: no scheduler process,
    and the controller-manager process runs every controller but the claim controller (it
    creates a namespace's default ServiceAccount, not a pod's claim)."""
    commands = Commands(tmp_path / "logs")
    audit = tmp_path / "audit.log"
    try:
        up = await commands.start(
            "up", "--processes", "--data-dir", str(tmp_path / "data"), "--port", "0",
            "--nodes", "1", "--store", "memory", "--audit-log-path", str(audit),
            "--disable", "scheduler,resourceclaim-controller",
        )  # fmt: skip
        disabled = await up.wait_for_line("disabled: ", timeout=120.0)
        kubeconfig = (await up.wait_for_line("kubeconfig: ")).removeprefix("kubeconfig: ")
        client = RESTClient.from_kubeconfig(Path(kubeconfig))
        try:
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
            await client.create(kinds.NAMESPACES, namespace)
            await wait_for(
                lambda: _exists(client, kinds.SERVICE_ACCOUNTS, "default", "team"),
                timeout=30.0,
                what="the default ServiceAccount of namespace team",
            )
            for doc in yaml.safe_load_all(EXAMPLE.read_text()):
                await client.create(kinds.for_kind(doc["apiVersion"], doc["kind"]), doc, "default")
            await asyncio.sleep(SETTLE_SECONDS)
            claims = (await client.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
            pod = await client.get(kinds.PODS, POD, "default")
        finally:
            await client.close()
        code, _ = await up.stop()
    finally:
        await commands.close()

    started = {line.split()[2] for line in up.stdout_lines if line.startswith("[up] started ")}
    assert started == {"apiserver", "controller-manager", "nodes"}
    assert disabled.startswith("disabled: scheduler, resourceclaim-controller")
    assert claims == []
    assert "nodeName" not in pod["spec"]
    users = {orjson.loads(line)["user"]["username"] for line in audit.read_bytes().splitlines()}
    assert CLAIM_CONTROLLER not in users
    assert auth.SCHEDULER not in users
    assert code == 0


async def _exists(client: RESTClient, rt: kinds.ResourceType, name: str, namespace: str) -> bool:
    try:
        await client.get(rt, name, namespace)
    except StatusError as err:
        if err.code == 404:
            return False
        raise
    return True
