"""A simulated pod's status over time, as kubelet reports it (`getPhase` in kubelet_pods.go,
the conditions of status/generate.go, container restarts with CrashLoopBackOff).

Pure functions of the stored pod, its `Behaviour` and the time: every input comes from the
API, so a restarted node computes the same status again and writes nothing. A container runs
as its command says (`draplane.api.containercommand`: `sleep 5`, `exit 3`, `true`...) or, for a
command draplane does not know, until it is stopped; the pod's annotations override both. It
then restarts as the pod's `restartPolicy` says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from draplane.api import meta
from draplane.api.containercommand import Run, run_of
from draplane.api.meta import Obj, ObjLike
from draplane.api.types import Container, Pod
from draplane.clock import format_time, parse_time
from draplane.node._podconditions import TERMINAL_PHASES, finish, sidecar

RUN_SECONDS_ANNOTATION = "draplane.dev/run-seconds"
"""Seconds each regular container of the pod runs before it exits (default: never exits)."""
EXIT_CODE_ANNOTATION = "draplane.dev/exit-code"
"""The exit code of the pod's regular containers when their run time ends (default 0)."""
STOP_SECONDS_ANNOTATION = "draplane.dev/stop-seconds"
"""Seconds the containers take to exit after the stop signal of a deletion (default 0); past
the deletion's grace period they are killed (exit code 137)."""

BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
BACKOFF_RESET = 600.0
KILLED_EXIT_CODE = 137
_MAX_STEPS = 10_000


@dataclass(frozen=True)
class Behaviour:
    run_seconds: float | None
    """How long a container runs when neither an annotation nor its command says."""
    exit_code: int = 0
    stop_seconds: float = 0.0
    commands: Mapping[str, Run] = field(default_factory=dict)
    """Containers whose command says how they run, by name."""
    annotated_seconds: bool = False
    annotated_code: bool = False

    def of(self, container: str) -> tuple[float | None, int]:
        """(seconds the container runs or None, its exit code): an annotation, else its
        command, else the defaults."""
        run = self.commands.get(container)
        seconds = run.seconds if run and not self.annotated_seconds else self.run_seconds
        code = run.exit_code if run and not self.annotated_code else self.exit_code
        return seconds, code


def behaviour(pod: Pod, *, default_run_seconds: float | None = None) -> Behaviour:
    """The pod's behaviour from its annotations and its containers' commands; malformed
    annotation values fall back to the defaults."""
    annotations = meta.annotations(pod)
    run = _number(annotations.get(RUN_SECONDS_ANNOTATION))
    try:
        exit_code = min(max(int(annotations.get(EXIT_CODE_ANNOTATION, "")), 0), 255)
        annotated_code = True
    except ValueError:
        exit_code, annotated_code = 0, False
    commands = {}
    for container in meta.pod_spec(pod).get("containers") or []:
        known = run_of(container)
        if known is not None:
            commands[str(container.get("name", ""))] = known
    return Behaviour(
        run_seconds=default_run_seconds if run is None else run,
        exit_code=exit_code,
        stop_seconds=_number(annotations.get(STOP_SECONDS_ANNOTATION)) or 0.0,
        commands=commands,
        annotated_seconds=run is not None,
        annotated_code=annotated_code,
    )


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and number >= 0 else None


def is_started(status: ObjLike) -> bool:
    """The containers were created (a first start status was written)."""
    statuses = status.get("containerStatuses") or []
    return bool(statuses) and all(cs.get("containerID") for cs in statuses)


def container_id(pod: Pod, name: str, restart_count: int) -> str:
    digest = hashlib.sha256(f"{meta.uid(pod)}/{name}/{restart_count}".encode()).hexdigest()
    return "containerd://" + digest


def image_id(image: str) -> str:
    """`<repository>@sha256:<digest>`, as a runtime reports the image it pulled."""
    repository = image.split("@")[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return f"{repository}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def _base(container: Container) -> Obj:
    image = str(container.get("image", ""))
    return {"name": container.get("name", ""), "image": image, "imageID": "", "containerID": ""}


def _waiting(container: Container, reason: str = "ContainerCreating") -> Obj:
    return {
        **_base(container),
        "ready": False,
        "started": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": reason}},
        "lastState": {},
    }


def _run(pod: Pod, cs: Obj, at: datetime, *, restart_count: int) -> None:
    cs["restartCount"] = restart_count
    cs["containerID"] = container_id(pod, str(cs["name"]), restart_count)
    cs["imageID"] = image_id(str(cs["image"]))
    cs["state"] = {"running": {"startedAt": format_time(at)}}
    cs["ready"] = cs["started"] = True


def _terminated(cs: Obj, code: int, *, started: str, finished: datetime) -> Obj:
    reason = "Completed" if code == 0 else "Error"
    return {
        "exitCode": code,
        "reason": reason,
        "startedAt": started,
        "finishedAt": format_time(finished),
        "containerID": cs["containerID"],
    }


def pending_status(pod: Pod, *, now: datetime, host_ip: str) -> Obj:
    """Containers waiting in ContainerCreating (their claims are not prepared yet)."""
    status = meta.deep_copy(pod.get("status") or {})
    status.update(
        phase="Pending",
        hostIP=host_ip,
        hostIPs=[{"ip": host_ip}],
        startTime=status.get("startTime") or format_time(now),
    )
    spec = meta.pod_spec(pod)
    waiting = "PodInitializing" if spec.get("initContainers") else "ContainerCreating"
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [_waiting(c, waiting) for c in spec["initContainers"]]
    status["containerStatuses"] = [_waiting(c, waiting) for c in spec.get("containers") or []]
    return finish(pod, status, now=now, sandbox=False)


def start_status(pod: Pod, *, now: datetime, host_ip: str, pod_ip: str) -> Obj:
    """The containers start: regular init containers ran to completion, sidecars and
    regular containers run."""
    status = meta.deep_copy(pod.get("status") or {})
    status.update(
        hostIP=host_ip,
        hostIPs=[{"ip": host_ip}],
        podIP=pod_ip,
        podIPs=[{"ip": pod_ip}],
        startTime=status.get("startTime") or format_time(now),
    )
    spec = meta.pod_spec(pod)
    inits: list[Obj] = []
    for container in spec.get("initContainers") or []:
        cs = _waiting(container)
        _run(pod, cs, now, restart_count=0)
        if not sidecar(container):
            cs["state"] = {"terminated": _terminated(cs, 0, started=format_time(now), finished=now)}
            cs["ready"] = cs["started"] = False
        inits.append(cs)
    if inits:
        status["initContainerStatuses"] = inits
    statuses = []
    for container in spec.get("containers") or []:
        cs = _waiting(container)
        _run(pod, cs, now, restart_count=0)
        statuses.append(cs)
    status["containerStatuses"] = statuses
    return finish(pod, status, now=now, sandbox=True)


def advance(pod: Pod, how: Behaviour, *, now: datetime) -> tuple[Obj, datetime | None]:
    """The started pod's status at `now`, and when it changes next (None: not by itself)."""
    status = meta.deep_copy(pod.get("status") or {})
    policy = str(meta.pod_spec(pod).get("restartPolicy") or "Always")
    wakes: list[datetime] = []
    for cs in status.get("initContainerStatuses") or []:
        if "terminated" not in cs.get("state", {}):  # a sidecar: runs until the pod stops
            wake = _advance_container(pod, cs, how, "Always", now)
            wakes += [wake] if wake else []
    for cs in status.get("containerStatuses") or []:
        wake = _advance_container(pod, cs, how, policy, now)
        wakes += [wake] if wake else []
    status = finish(pod, status, now=now, sandbox=True)
    if status["phase"] in TERMINAL_PHASES:
        # Sidecars are stopped once the regular containers are done.
        for cs in status.get("initContainerStatuses") or []:
            state = cs.get("state") or {}
            if "running" in state:
                started = str(state["running"]["startedAt"])
                cs["state"] = {"terminated": _terminated(cs, 0, started=started, finished=now)}
                cs["ready"] = cs["started"] = False
        return finish(pod, status, now=now, sandbox=False), None
    return status, min(wakes) if wakes else None


def _advance_container(
    pod: Pod, cs: Obj, how: Behaviour, policy: str, now: datetime
) -> datetime | None:
    for _ in range(_MAX_STEPS):
        state = cs.get("state") or {}
        if "running" in state:
            run_seconds, exit_code = how.of(str(cs.get("name", "")))
            if run_seconds is None:
                return None
            started = str(state["running"]["startedAt"])
            finish = parse_time(started) + timedelta(seconds=run_seconds)
            if finish > now:
                return finish
            cs["state"] = {
                "terminated": _terminated(cs, exit_code, started=started, finished=finish)
            }
            cs["ready"] = cs["started"] = False
        elif "terminated" in state:
            if not _restarts(policy, int(state["terminated"].get("exitCode", 0))):
                return None
            cs["lastState"] = {"terminated": state["terminated"]}
            cs["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
        elif (state.get("waiting") or {}).get("reason") == "CrashLoopBackOff":
            last = (cs.get("lastState") or {}).get("terminated") or {}
            finished = parse_time(str(last["finishedAt"]))
            ran = (finished - parse_time(str(last["startedAt"]))).total_seconds()
            delay = backoff(int(cs.get("restartCount", 0)) + 1, ran)
            restart_at = finished + timedelta(seconds=delay)
            if restart_at > now:
                state["waiting"]["message"] = (
                    f"back-off {int(delay)}s restarting failed container={cs['name']} "
                    f"pod={meta.name(pod)}_{meta.namespace(pod)}({meta.uid(pod)})"
                )
                return restart_at
            _run(pod, cs, restart_at, restart_count=int(cs.get("restartCount", 0)) + 1)
        else:
            return None
    return now


def _restarts(policy: str, exit_code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def backoff(restart: int, ran_seconds: float) -> float:
    """Seconds before the `restart`-th restart: the first is at once, then 10 s doubling up
    to 300 s; a container that ran for 10 minutes restarts at once again."""
    if restart <= 1 or ran_seconds >= BACKOFF_RESET:
        return 0.0
    return min(BACKOFF_INITIAL * float(2 ** min(restart - 2, 16)), BACKOFF_MAX)


def stopped_status(pod: Pod, *, at: datetime, killed: bool) -> Obj:
    """A deleted pod whose containers stopped at `at`: terminal whatever its restartPolicy,
    Succeeded when every container exited 0, else Failed."""
    status = meta.deep_copy(pod.get("status") or {})
    started = is_started(status)
    code = KILLED_EXIT_CODE if killed else 0
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        state = cs.get("state") or {}
        if "running" in state:
            cs["state"] = {
                "terminated": _terminated(
                    cs, code, started=str(state["running"]["startedAt"]), finished=at
                )
            }
        elif "waiting" in state and not (cs.get("lastState") or {}).get("terminated"):
            cs["state"] = {"terminated": _unknown(at)}
        cs["ready"] = cs["started"] = False
    if not (status.get("containerStatuses") or []):
        status["containerStatuses"] = [
            {**_waiting(c), "state": {"terminated": _unknown(at)}}
            for c in meta.pod_spec(pod).get("containers") or []
        ]
    codes = [_last_exit_code(cs) for cs in status["containerStatuses"]]
    status["phase"] = "Succeeded" if started and all(c == 0 for c in codes) else "Failed"
    return finish(pod, status, now=at, sandbox=False, phase_=status["phase"])


def _unknown(at: datetime) -> Obj:
    return {
        "exitCode": KILLED_EXIT_CODE,
        "reason": "ContainerStatusUnknown",
        "message": "The container could not be located when the pod was terminated",
        "finishedAt": format_time(at),
    }


def _last_exit_code(cs: Obj) -> int:
    state = cs.get("state") or {}
    terminated = state.get("terminated") or (cs.get("lastState") or {}).get("terminated") or {}
    return int(terminated.get("exitCode", KILLED_EXIT_CODE))
