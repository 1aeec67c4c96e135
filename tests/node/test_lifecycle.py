"""The simulated pod lifecycle on the FakeClock: restartPolicy x exit code, back-off, init
containers and sidecars, conditions (also while a claim holds the pod back), and graceful
deletion within the grace period."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.clock import parse_time
from draplane.node import EXIT_CODE_ANNOTATION, RUN_SECONDS_ANNOTATION, STOP_SECONDS_ANNOTATION
from draplane.testing.apistate import seed_objects, wait_for
from draplane.testing.builders import PodBuilder, make_claim, make_pod

from .conftest import Env


def run_for(seconds: int, *, policy: str, exit_code: int = 0) -> PodBuilder:
    return (
        make_pod()
        .annotation(RUN_SECONDS_ANNOTATION, str(seconds))
        .annotation(EXIT_CODE_ANNOTATION, str(exit_code))
        .restart_policy(policy)
    )


async def start(env: Env, pod: Obj) -> Obj:
    created = await env.admin.create(kinds.PODS, pod, "default")
    await env.bind(created, "node-0")
    return await wait_for(lambda: _status_matches(env, "Running"), what="Running")


async def _status_matches(env: Env, phase: str, restarts: int | None = None) -> Obj | None:
    pod = await env.pod()
    status = pod.get("status") or {}
    if status.get("phase") != phase:
        return None
    if restarts is not None and status["containerStatuses"][0]["restartCount"] != restarts:
        return None
    return pod


def conditions(pod: Obj) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in pod["status"]["conditions"]}


@dataclass(frozen=True)
class Exit:
    policy: str
    exit_code: int
    phase: str
    restarts: int
    state: str
    terminated: Obj = field(default_factory=dict)
    """The exit as the current state (terminal pods) or lastState (restarted containers)."""


EXIT_CASES = [
    pytest.param(
        Exit("Never", 0, "Succeeded", 0, "terminated", {"exitCode": 0, "reason": "Completed"}),
        id="never-exit-0",
    ),
    pytest.param(
        Exit("Never", 1, "Failed", 0, "terminated", {"exitCode": 1, "reason": "Error"}),
        id="never-exit-1",
    ),
    pytest.param(
        Exit("OnFailure", 0, "Succeeded", 0, "terminated", {"exitCode": 0, "reason": "Completed"}),
        id="onfailure-exit-0",
    ),
    pytest.param(
        Exit("OnFailure", 3, "Running", 1, "running", {"exitCode": 3, "reason": "Error"}),
        id="onfailure-exit-3-restarts",
    ),
    pytest.param(
        Exit("Always", 0, "Running", 1, "running", {"exitCode": 0, "reason": "Completed"}),
        id="always-exit-0-restarts",
    ),
    pytest.param(
        Exit("Always", 2, "Running", 1, "running", {"exitCode": 2, "reason": "Error"}),
        id="always-exit-2-restarts",
    ),
]


@pytest.mark.parametrize("case", EXIT_CASES)
async def test_container_exit_follows_restart_policy(env: Env, case: Exit) -> None:
    await env.start_nodes(1)
    running = await start(env, run_for(10, policy=case.policy, exit_code=case.exit_code).obj())
    [first] = running["status"]["containerStatuses"]
    assert first["state"]["running"]["startedAt"] == running["status"]["startTime"]
    assert first["containerID"].startswith("containerd://")
    assert first["imageID"].startswith("registry.k8s.io/pause@sha256:")
    assert (first["ready"], first["started"], first["restartCount"]) == (True, True, 0)
    env.clock.step(9)
    assert (await env.pod())["status"]["phase"] == "Running"
    env.clock.step(1)
    done = await wait_for(
        lambda: _status_matches(env, case.phase, case.restarts), what=f"{case.phase} after exit"
    )
    [container] = done["status"]["containerStatuses"]
    assert list(container["state"]) == [case.state]
    assert container["restartCount"] == case.restarts
    exited = (
        container["state"]["terminated"]
        if case.state == "terminated"
        else container["lastState"]["terminated"]
    )
    assert {k: exited[k] for k in case.terminated} == case.terminated
    assert exited["containerID"] == first["containerID"]
    assert exited["startedAt"] == first["state"]["running"]["startedAt"]
    if case.state == "running":
        assert container["containerID"] != first["containerID"]
        assert conditions(done)["Ready"] == ("True", "")
    else:
        reason = "PodCompleted" if case.phase == "Succeeded" else "PodFailed"
        assert conditions(done)["Ready"] == ("False", reason)
        assert conditions(done)["ContainersReady"] == ("False", reason)
        assert conditions(done)["PodReadyToStartContainers"] == ("False", "")


@pytest.mark.parametrize(
    ("annotation", "exits_after"),
    [pytest.param(None, 20, id="the-nodes-default"), pytest.param("5", 5, id="the-pod-says")],
)
async def test_run_time_default_comes_from_the_nodes(
    env: Env, annotation: str | None, exits_after: int
) -> None:
    await env.start_nodes(1, run_seconds=20)
    pod = make_pod().restart_policy("Never")
    if annotation is not None:
        pod.annotation(RUN_SECONDS_ANNOTATION, annotation)
    await start(env, pod.obj())
    env.clock.step(exits_after - 1)
    assert (await env.pod())["status"]["phase"] == "Running"
    env.clock.step(1)
    await wait_for(lambda: _status_matches(env, "Succeeded"), what="Succeeded")


async def test_crashing_container_backs_off(env: Env) -> None:
    await env.start_nodes(1)
    await start(env, run_for(5, policy="Always", exit_code=1).obj())
    env.clock.step(5)  # first exit: restarted at once
    await wait_for(lambda: _status_matches(env, "Running", 1), what="first restart")
    env.clock.step(5)  # second exit: 10 s of back-off

    async def backing_off() -> Obj | None:
        pod = await env.pod()
        [cs] = pod["status"]["containerStatuses"]
        return pod if "waiting" in cs["state"] else None

    waiting = await wait_for(backing_off, what="CrashLoopBackOff")
    [cs] = waiting["status"]["containerStatuses"]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["state"]["waiting"]["message"].startswith(
        "back-off 10s restarting failed container=ctr pod=my-pod_default("
    )
    assert (cs["ready"], cs["restartCount"]) == (False, 1)
    assert waiting["status"]["phase"] == "Running"
    assert conditions(waiting)["ContainersReady"] == ("False", "ContainersNotReady")
    assert conditions(waiting)["Ready"] == ("False", "ContainersNotReady")
    env.clock.step(10)
    again = await wait_for(lambda: _status_matches(env, "Running", 2), what="second restart")
    assert conditions(again)["Ready"] == ("True", "")


async def test_init_container_and_sidecar(env: Env) -> None:
    await env.start_nodes(1)
    pod = (
        run_for(10, policy="Never")
        .init_container("setup")
        .init_container("proxy", restartPolicy="Always")
        .obj()
    )
    running = await start(env, pod)
    setup, proxy = running["status"]["initContainerStatuses"]
    assert setup["state"]["terminated"]["reason"] == "Completed"
    assert (proxy["ready"], list(proxy["state"])) == (True, ["running"])
    assert conditions(running)["Initialized"] == ("True", "")
    env.clock.step(10)
    done = await wait_for(lambda: _status_matches(env, "Succeeded"), what="Succeeded")
    assert [list(cs["state"]) for cs in done["status"]["initContainerStatuses"]] == [
        ["terminated"],
        ["terminated"],
    ]
    assert conditions(done)["Initialized"] == ("True", "PodCompleted")


async def test_conditions_move_only_when_they_flip(env: Env) -> None:
    await env.start_nodes(1)
    running = await start(env, run_for(10, policy="Always").container("second").obj())
    assert list(conditions(running)) == [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert set(conditions(running).values()) == {("True", "")}
    before = {c["type"]: c["lastTransitionTime"] for c in running["status"]["conditions"]}
    env.clock.step(10)
    restarted = await wait_for(lambda: _status_matches(env, "Running", 1), what="restart")
    after = {c["type"]: c["lastTransitionTime"] for c in restarted["status"]["conditions"]}
    assert after == before


@dataclass(frozen=True)
class Deletion:
    stop_seconds: int
    grace: int | None
    """The DELETE's gracePeriodSeconds (None: the pod's 30)."""
    stops_after: int
    phase: str
    exit_code: int


DELETION_CASES = [
    pytest.param(Deletion(0, None, 0, "Succeeded", 0), id="exits-on-the-stop-signal"),
    pytest.param(Deletion(5, None, 5, "Succeeded", 0), id="exits-within-the-grace-period"),
    pytest.param(Deletion(60, None, 30, "Failed", 137), id="killed-at-the-grace-period"),
    pytest.param(Deletion(60, 10, 10, "Failed", 137), id="killed-at-a-shorter-grace-period"),
]


@pytest.mark.parametrize("case", DELETION_CASES)
async def test_graceful_deletion_stops_within_the_grace_period(env: Env, case: Deletion) -> None:
    await env.start_nodes(1)
    pod = (
        make_pod()
        .annotation(STOP_SECONDS_ANNOTATION, str(case.stop_seconds))
        .finalizer("example.com/keep")
        .obj()
    )
    await start(env, pod)
    deleting = await env.admin.delete(
        kinds.PODS, "my-pod", "default", grace_period_seconds=case.grace
    )
    assert deleting["metadata"]["deletionGracePeriodSeconds"] == (case.grace or 30)
    if case.stops_after:
        env.clock.step(case.stops_after - 1)
        assert (await env.pod())["status"]["phase"] == "Running"
        env.clock.step(1)
    stopped = await wait_for(lambda: _status_matches(env, case.phase), what=case.phase)
    [cs] = stopped["status"]["containerStatuses"]
    assert cs["state"]["terminated"]["exitCode"] == case.exit_code
    assert cs["state"]["terminated"]["reason"] == ("Completed" if case.exit_code == 0 else "Error")

    async def finalized() -> Obj | None:
        current = await env.pod()
        return current if current["metadata"]["deletionGracePeriodSeconds"] == 0 else None

    held = await wait_for(finalized, what="the node's DELETE with grace period 0")
    assert meta.finalizers(held) == ["example.com/keep"]


async def test_pod_waiting_for_its_claim_is_not_initialized(env: Env) -> None:
    """While its claim is not allocated the pod reports kubelet's Pending status: containers
    waiting, no sandbox, init containers incomplete."""
    await env.start_nodes(1)
    _, pod = await seed_objects(
        env.admin,
        make_claim().obj(),
        make_pod().claim_ref("gpu", "my-claim").init_container("setup").obj(),
    )
    await env.bind(pod, "node-0")

    async def pending() -> Obj | None:
        current = await env.pod()
        return current if (current.get("status") or {}).get("containerStatuses") else None

    waiting = await wait_for(pending, what="the Pending status")
    status = waiting["status"]
    assert status["phase"] == "Pending"
    assert [
        cs["state"] for cs in status["initContainerStatuses"] + status["containerStatuses"]
    ] == [
        {"waiting": {"reason": "PodInitializing"}},
        {"waiting": {"reason": "PodInitializing"}},
    ]
    assert conditions(waiting) == {
        "PodReadyToStartContainers": ("False", ""),
        "Initialized": ("False", "ContainersNotInitialized"),
        "Ready": ("False", "ContainersNotReady"),
        "ContainersReady": ("False", "ContainersNotReady"),
        "PodScheduled": ("True", ""),
    }
    messages = {c["type"]: c.get("message") for c in status["conditions"]}
    assert messages["Initialized"] == "containers with incomplete status: [setup]"
    assert messages["Ready"] == "containers with unready status: [ctr]"
    assert status["hostIP"] and status["startTime"] and "podIP" not in status


@dataclass(frozen=True)
class Command:
    command: list[str]
    image: str
    running_for: int
    """Seconds the container runs before it exits (checked at one second before)."""
    phase: str
    exit_code: int


COMMAND_CASES = [
    pytest.param(Command(["sleep", "5"], "busybox", 5, "Succeeded", 0), id="sleep"),
    pytest.param(
        Command(["sh", "-c", "echo hi; sleep 3 && exit 4"], "busybox", 3, "Failed", 4),
        id="script-exit-code",
    ),
    pytest.param(Command(["false"], "busybox", 0, "Failed", 1), id="false-at-once"),
    pytest.param(Command([], "busybox:1.36", 0, "Succeeded", 0), id="busybox-default"),
]


@pytest.mark.parametrize("case", COMMAND_CASES)
async def test_container_runs_as_its_command_says(env: Env, case: Command) -> None:
    await env.start_nodes(1)
    pod = make_pod().restart_policy("Never").obj()
    pod["spec"]["containers"][0]["image"] = case.image
    if case.command:
        pod["spec"]["containers"][0]["command"] = case.command
    created = await env.admin.create(kinds.PODS, pod, "default")
    await env.bind(created, "node-0")
    if case.running_for:
        await wait_for(lambda: _status_matches(env, "Running"), what="Running")
        env.clock.step(case.running_for - 1)
        assert (await env.pod())["status"]["phase"] == "Running"
        env.clock.step(1)
    done = await wait_for(lambda: _status_matches(env, case.phase), what=case.phase)
    [cs] = done["status"]["containerStatuses"]
    terminated = cs["state"]["terminated"]
    assert terminated["exitCode"] == case.exit_code
    started, finished = parse_time(terminated["startedAt"]), parse_time(terminated["finishedAt"])
    assert (finished - started).total_seconds() == case.running_for


@pytest.mark.parametrize(
    ("annotations", "command", "exits_after", "exit_code"),
    [
        pytest.param({RUN_SECONDS_ANNOTATION: "7"}, ["sleep", "2"], 7, 0, id="run-seconds-wins"),
        pytest.param({EXIT_CODE_ANNOTATION: "9"}, ["sleep", "2"], 2, 9, id="exit-code-wins"),
        pytest.param(
            {RUN_SECONDS_ANNOTATION: "3"}, ["nginx"], 3, 0, id="unknown-command-annotated"
        ),
    ],
)
async def test_annotations_override_the_command(
    env: Env, annotations: dict[str, str], command: list[str], exits_after: int, exit_code: int
) -> None:
    await env.start_nodes(1)
    pod = make_pod().restart_policy("OnFailure" if exit_code == 0 else "Never")
    for key, value in annotations.items():
        pod.annotation(key, value)
    obj = pod.obj()
    obj["spec"]["containers"][0]["command"] = command
    await start(env, obj)
    env.clock.step(exits_after - 1)
    assert (await env.pod())["status"]["phase"] == "Running"
    env.clock.step(1)
    phase = "Succeeded" if exit_code == 0 else "Failed"
    done = await wait_for(lambda: _status_matches(env, phase), what=phase)
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == exit_code


async def test_an_unknown_command_runs_until_deleted(env: Env) -> None:
    await env.start_nodes(1)
    for name, command in (("server", ["nginx", "-g", "daemon off;"]), ("batch", ["sleep", "10"])):
        obj = make_pod(name).restart_policy("Never").obj()
        obj["spec"]["containers"][0]["command"] = command
        await env.bind(await env.admin.create(kinds.PODS, obj, "default"), "node-0")
        await wait_for(lambda n=name: _phase_of(env, n, "Running"), what=f"{name} Running")
    env.clock.step(3600)
    # The node has seen the hour pass once the batch pod finished.
    await wait_for(lambda: _phase_of(env, "batch", "Succeeded"), what="batch Succeeded")
    assert (await env.pod("server"))["status"]["phase"] == "Running"


async def _phase_of(env: Env, name: str, phase: str) -> Obj | None:
    pod = await env.pod(name)
    return pod if (pod.get("status") or {}).get("phase") == phase else None
