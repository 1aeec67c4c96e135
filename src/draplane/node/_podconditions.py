"""A pod's phase and conditions from its container statuses, as kubelet computes them
(`getPhase` in kubelet_pods.go, status/generate.go): `phase()` and `finish()`.
"""

from __future__ import annotations

from datetime import datetime

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.types import Container, Pod
from draplane.clock import format_time

TERMINAL_PHASES = ("Succeeded", "Failed")
CONDITION_ORDER = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def sidecar(container: Container) -> bool:
    """A restartable init container (`restartPolicy: Always`)."""
    return container.get("restartPolicy") == "Always"


def phase(pod: Pod, status: Obj) -> str:
    """kubelet's getPhase over the container statuses."""
    spec = meta.pod_spec(pod)
    policy = str(spec.get("restartPolicy") or "Always")
    inits = {str(cs.get("name")): cs for cs in status.get("initContainerStatuses") or []}
    for container in spec.get("initContainers") or []:
        if sidecar(container):
            continue
        cs = inits.get(str(container.get("name")))
        terminated = ((cs or {}).get("state") or {}).get("terminated")
        if terminated is None:
            return "Pending"
        if terminated.get("exitCode") != 0:
            return "Failed" if policy == "Never" else "Pending"
    running = waiting = stopped = succeeded = 0
    statuses = status.get("containerStatuses") or []
    for cs in statuses:
        state = cs.get("state") or {}
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            succeeded += state["terminated"].get("exitCode") == 0
        elif (cs.get("lastState") or {}).get("terminated"):
            stopped += 1
        else:
            waiting += 1
    if waiting or len(statuses) < len(spec.get("containers") or []):
        return "Pending"
    if running:
        return "Running"
    if policy == "Always":
        return "Running"
    if stopped == succeeded:
        return "Succeeded"
    return "Failed" if policy == "Never" else "Running"


def finish(
    pod: Pod, status: Obj, *, now: datetime, sandbox: bool, phase_: str | None = None
) -> Obj:
    """Set the phase (`phase_`, else computed) and the conditions from the container
    statuses; `sandbox`: the pod sandbox exists (PodReadyToStartContainers)."""
    status["phase"] = phase_ or phase(pod, status)
    terminal = status["phase"] in TERMINAL_PHASES
    spec = meta.pod_spec(pod)
    _set_condition(status, "PodReadyToStartContainers", sandbox, now=now)
    incomplete = [
        str(cs.get("name"))
        for cs in status.get("initContainerStatuses") or []
        if (cs.get("state") or {}).get("terminated", {}).get("exitCode") != 0
        and not ((cs.get("state") or {}).get("running"))
    ]
    if not spec.get("initContainers") or status["phase"] == "Succeeded":
        reason = "PodCompleted" if spec.get("initContainers") else ""
        _set_condition(status, "Initialized", True, now=now, reason=reason)
    elif incomplete and not any(
        "running" in (cs.get("state") or {}) for cs in status.get("containerStatuses") or []
    ):
        message = f"containers with incomplete status: [{' '.join(incomplete)}]"
        _set_condition(
            status,
            "Initialized",
            False,
            now=now,
            reason="ContainersNotInitialized",
            message=message,
        )
    else:
        _set_condition(status, "Initialized", True, now=now)
    if terminal:
        reason = "PodCompleted" if status["phase"] == "Succeeded" else "PodFailed"
        ready, message = False, ""
    else:
        sidecars = {str(c.get("name")) for c in spec.get("initContainers") or [] if sidecar(c)}
        unready = [
            str(cs.get("name"))
            for cs in status.get("initContainerStatuses") or []
            if str(cs.get("name")) in sidecars and not cs.get("ready")
        ] + [
            str(cs.get("name"))
            for cs in status.get("containerStatuses") or []
            if not cs.get("ready")
        ]
        ready = not unready
        reason = "" if ready else "ContainersNotReady"
        message = "" if ready else f"containers with unready status: [{' '.join(unready)}]"
    _set_condition(status, "ContainersReady", ready, now=now, reason=reason, message=message)
    gate_reason, gate_message = _readiness_gates(pod, status)
    if ready and gate_reason:
        _set_condition(status, "Ready", False, now=now, reason=gate_reason, message=gate_message)
    else:
        _set_condition(status, "Ready", ready, now=now, reason=reason, message=message)
    order = {t: i for i, t in enumerate(CONDITION_ORDER)}
    status["conditions"].sort(key=lambda c: order.get(str(c.get("type")), len(order)))
    return status


def _readiness_gates(pod: Pod, status: Obj) -> tuple[str, str]:
    conditions = {str(c.get("type")): c for c in status.get("conditions") or []}
    for gate in meta.pod_spec(pod).get("readinessGates") or []:
        kind = str(gate.get("conditionType"))
        if kind not in conditions:
            return (
                "ReadinessGatesNotReady",
                f'corresponding condition of pod readiness gate "{kind}" does not exist.',
            )
        if conditions[kind].get("status") != "True":
            return (
                "ReadinessGatesNotReady",
                f'the status of pod readiness gate "{kind}" is not "True", but '
                f"{conditions[kind].get('status')}",
            )
    return "", ""


def _set_condition(
    status: Obj, kind: str, value: bool, *, now: datetime, reason: str = "", message: str = ""
) -> Obj:
    """Set one condition; its lastTransitionTime moves only when its status flips."""
    conditions: list[Obj] = status.setdefault("conditions", [])
    text = "True" if value else "False"
    old = next((c for c in conditions if c.get("type") == kind), None)
    cond: Obj = {"type": kind, "status": text, "lastProbeTime": None}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    same = old is not None and old.get("status") == text
    cond["lastTransitionTime"] = old.get("lastTransitionTime") if same and old else format_time(now)
    if old is None:
        conditions.append(cond)
    else:
        conditions[conditions.index(old)] = cond
    return status
