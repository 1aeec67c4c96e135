"""What a simulated container's log says, built from stored state only (the pod, its ConfigMaps,
its ResourceClaims): the one place that writes container log text.

There is no container runtime, so the log of one container instance is what the container
would see and do: a start line, its environment (`env` and `envFrom` from ConfigMaps, the
variables the claim's driver injects through CDI, as the node resolved them from the CDI specs
when it has kubelet plugins), the devices prepared for each claim it uses, what its command
prints (`echo`, see `draplane.api.containercommand`), and an exit line once it terminated.
Lines carry the times of the container status
(`startedAt`, `finishedAt`). Choosing the container and the instance follows kube-apiserver's
`LogLocation` and kubelet's `validateContainerLogStatus`, with their 400 messages.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from draplane.api import deviceconfig, errors, meta, podrefs
from draplane.api.containercommand import run_of
from draplane.api.meta import Obj
from draplane.clock import parse_time

_VAR_REF = re.compile(r"\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")


@dataclass(frozen=True)
class LogOptions:
    """PodLogOptions, validated."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None
    since_time: datetime | None = None


@dataclass(frozen=True)
class Instance:
    """One run of a container, from its status."""

    container_id: str
    started_at: str
    terminated: Obj | None


Line = tuple[datetime, str]
Writer = Callable[[bytes], Awaitable[bool]]
"""Writes part of a streamed log; False once no more may be written."""


def container_name(pod: Obj, requested: str) -> str:
    """The container to read: the requested one, or the only one (kube-apiserver's rule)."""
    spec = pod.get("spec") or {}
    containers = [str(c.get("name")) for c in spec.get("containers") or []]
    inits = [str(c.get("name")) for c in spec.get("initContainers") or []]
    ephemeral = [str(c.get("name")) for c in spec.get("ephemeralContainers") or []]
    name = meta.name(pod)
    if requested:
        if requested not in containers + inits + ephemeral:
            raise errors.bad_request(f"container {requested} is not valid for pod {name}")
        return requested
    if len(containers) == 1:
        return containers[0]
    if not containers:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    message = (
        f"a container name must be specified for pod {name}, choose one of: "
        f"[{' '.join(containers)}]"
    )
    if inits:
        message += f" or one of the init containers: [{' '.join(inits)}]"
    if ephemeral:
        message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
    raise errors.bad_request(message)


def instance(pod: Obj, container: str, *, previous: bool) -> Instance | None:
    """The container instance whose log is read; None when the pod has no node yet (an empty
    log, as kube-apiserver answers)."""
    if not (pod.get("spec") or {}).get("nodeName"):
        return None
    status = pod.get("status") or {}
    cs = next(
        (
            s
            for s in (status.get("containerStatuses") or [])
            + (status.get("initContainerStatuses") or [])
            + (status.get("ephemeralContainerStatuses") or [])
            if s.get("name") == container
        ),
        None,
    )
    pod_name = meta.name(pod)
    if cs is None:
        raise errors.bad_request(f'container "{container}" in pod "{pod_name}" is not available')
    state = cs.get("state") or {}
    last = (cs.get("lastState") or {}).get("terminated")
    terminated = state.get("terminated")
    if previous:
        if not last or not last.get("containerID"):
            raise errors.bad_request(
                f'previous terminated container "{container}" in pod "{pod_name}" not found'
            )
        return _terminated_instance(last)
    if "running" in state:
        return Instance(str(cs.get("containerID")), str(state["running"].get("startedAt")), None)
    if terminated is not None:
        if terminated.get("containerID") and terminated.get("startedAt"):
            return _terminated_instance(terminated)
        if last and last.get("containerID"):
            return _terminated_instance(last)
        raise errors.bad_request(f'container "{container}" in pod "{pod_name}" is terminated')
    if last:
        return _terminated_instance(last)
    if "waiting" in state:
        reason = str((state["waiting"] or {}).get("reason") or "")
        raise errors.bad_request(
            f'container "{container}" in pod "{pod_name}" is waiting to start: {reason}'
        )
    raise errors.bad_request(
        f'container "{container}" in pod "{pod_name}" is waiting to start - no logs yet'
    )


def _terminated_instance(terminated: Obj) -> Instance:
    return Instance(
        str(terminated.get("containerID")), str(terminated.get("startedAt") or ""), terminated
    )


def find_instance(pod: Obj, container: str, container_id: str) -> Instance | None:
    """The instance with this container ID as the pod's status has it now, if any."""
    status = pod.get("status") or {}
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        if cs.get("name") != container:
            continue
        state = cs.get("state") or {}
        if "running" in state and cs.get("containerID") == container_id:
            return Instance(container_id, str(state["running"].get("startedAt")), None)
        for terminated in (state.get("terminated"), (cs.get("lastState") or {}).get("terminated")):
            if terminated and terminated.get("containerID") == container_id:
                return _terminated_instance(terminated)
    return None


def claim_names(pod: Obj, container: str) -> list[str]:
    """The ResourceClaims the container uses, by name (unresolved ones are left out)."""
    return list(claim_requests(pod, container))


def claim_requests(pod: Obj, container: str) -> dict[str, set[str] | None]:
    """The ResourceClaims the container uses, by name, each with the requests it picked
    (`resources.claims[].request`; None: all of the claim's, as without `request`)."""
    spec = pod.get("spec") or {}
    used = podrefs.container_claim_requests(_container(pod, container))
    recorded = {
        str(s.get("name")): s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    out: dict[str, set[str] | None] = {}
    for pod_claim in spec.get("resourceClaims") or []:
        pod_claim_name = str(pod_claim.get("name"))
        if pod_claim_name not in used:
            continue
        source = pod_claim.get("source") or pod_claim  # 1.28 `source`, core/v1 since 1.31
        claim = source.get("resourceClaimName") or recorded.get(pod_claim_name)
        if claim:
            out[str(claim)] = used[pod_claim_name]
    return out


def configmap_names(pod: Obj, container: str) -> list[str]:
    spec_container = _container(pod, container)
    names = [
        str((source.get("configMapRef") or {}).get("name"))
        for source in spec_container.get("envFrom") or []
        if source.get("configMapRef")
    ]
    names += [
        str(((e.get("valueFrom") or {}).get("configMapKeyRef") or {}).get("name"))
        for e in spec_container.get("env") or []
        if (e.get("valueFrom") or {}).get("configMapKeyRef")
    ]
    return list(dict.fromkeys(names))


def _container(pod: Obj, name: str) -> Obj:
    spec = pod.get("spec") or {}
    for container in (
        (spec.get("containers") or [])
        + (spec.get("initContainers") or [])
        + (spec.get("ephemeralContainers") or [])
    ):
        if container.get("name") == name:
            return dict(container)
    return {}


def lines(
    pod: Obj,
    container: str,
    run: Instance,
    *,
    configmaps: dict[str, Obj],
    claims: dict[str, Obj | None],
) -> list[Line]:
    """The log of one container instance. `claims` maps each claim the container uses to the
    stored claim (None: gone)."""
    spec_container = _container(pod, container)
    started = _time(run.started_at)
    node = (pod.get("spec") or {}).get("nodeName", "")
    out: list[Line] = [
        (
            started,
            f"draplane: container {container} (image {spec_container.get('image', '')}) "
            f"started on node {node}",
        )
    ]
    env = environment(pod, spec_container, configmaps)
    devices: list[str] = []
    requests = claim_requests(pod, container)
    for claim_name, claim in claims.items():
        handles = _handles(pod, claim, requests.get(claim_name))
        for driver, data in handles:
            env.update({str(k): str(v) for k, v in (data.get("EnvVars") or {}).items()})
            devices += [
                f"draplane: claim {claim_name}: device {device} of driver {driver}"
                for device in data.get("Devices") or []
            ]
        if not handles:
            devices.append(f"draplane: claim {claim_name}: not allocated to this pod any more")
    env.update(cdi_env(pod, container))
    out += [(started, f"{key}={value}") for key, value in env.items()]
    out += [(started, text) for text in devices]
    known = run_of(spec_container)
    for offset, text in known.output if known else ():
        at = started + timedelta(seconds=offset)
        finished = (run.terminated or {}).get("finishedAt")
        if not finished or at <= _time(str(finished)):  # what it printed before it stopped
            out.append((at, text))
    if run.terminated is not None:
        out.append(exit_line(container, run))
    return out


def cdi_env(pod: Obj, container: str) -> dict[str, str]:
    """The env the container runtime injected from the CDI specs of the container's devices,
    as its node recorded it (the `deviceconfig.CDI_ENV_CONDITION` pod condition); malformed
    values are left out."""
    raw = next(
        (
            str(c.get("message") or "")
            for c in (pod.get("status") or {}).get("conditions") or []
            if c.get("type") == deviceconfig.CDI_ENV_CONDITION
        ),
        "",
    )
    try:
        recorded: Any = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        return {}
    env = recorded.get(container) if isinstance(recorded, dict) else None
    if not isinstance(env, dict):
        return {}
    return {str(k): str(v) for k, v in env.items()}


def exit_line(container: str, run: Instance) -> Line:
    terminated = run.terminated or {}
    finished = _time(str(terminated.get("finishedAt") or run.started_at))
    code = terminated.get("exitCode", 0)
    reason = terminated.get("reason", "")
    return finished, f"draplane: container {container} exited with code {code} ({reason})"


def _handles(pod: Obj, claim: Obj | None, requests: set[str] | None) -> list[tuple[str, Obj]]:
    """(driver, handle data) of a claim allocated and reserved for the pod; the data as the
    test driver writes it (`EnvVars`, `Devices`), other data is left out. With `requests`, a
    v1 allocation's devices are those of these requests only (a subrequest's result
    `<request>/<subrequest>` counts for its request), as kubelet hands a container only the
    CDI devices of the request it names."""
    if claim is None:
        return []
    status = claim.get("status") or {}
    if not any(r.get("uid") == meta.uid(pod) for r in status.get("reservedFor") or []):
        return []
    out: list[tuple[str, Obj]] = []
    for driver in deviceconfig.drivers(claim):
        # resource.k8s.io/v1: what the example driver's kubelet plugin prepares from the
        # allocation (CDI device names and the env of the opaque config).
        devices = [
            d
            for d in deviceconfig.prepared_devices(claim, driver)
            if podrefs.picks(requests, d.request)
        ]
        env = {k: v for d in devices for k, v in d.env.items()}
        out.append((driver, {"EnvVars": env, "Devices": [d.device for d in devices]}))
    for handle in (status.get("allocation") or {}).get("resourceHandles") or []:
        try:
            data: Any = orjson.loads(handle.get("data") or "{}")
        except orjson.JSONDecodeError:
            data = {}
        out.append(
            (
                str(handle.get("driverName") or status.get("driverName") or ""),
                data if isinstance(data, dict) else {},
            )
        )
    return out


def environment(pod: Obj, container: Obj, configmaps: dict[str, Obj]) -> dict[str, str]:
    """The container's variables as kubelet sets them: HOSTNAME, then `envFrom` in order,
    then `env` with `$(VAR)` references expanded. Secrets are not served, so references to
    them (and to missing ConfigMaps) are left out."""
    env: dict[str, str] = {"HOSTNAME": meta.name(pod)}
    for source in container.get("envFrom") or []:
        ref = source.get("configMapRef") or {}
        data = (configmaps.get(str(ref.get("name"))) or {}).get("data") or {}
        prefix = str(source.get("prefix") or "")
        env.update({prefix + str(k): str(v) for k, v in data.items()})
    for entry in container.get("env") or []:
        name = str(entry.get("name"))
        if "value" in entry or not entry.get("valueFrom"):
            env[name] = _expand(str(entry.get("value") or ""), env)
            continue
        value = _value_from(pod, entry["valueFrom"], configmaps)
        if value is not None:
            env[name] = value
    return env


def _expand(value: str, env: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _VAR_REF.sub(replace, value)


def _value_from(pod: Obj, source: Obj, configmaps: dict[str, Obj]) -> str | None:
    if source.get("configMapKeyRef"):
        ref = source["configMapKeyRef"]
        data = (configmaps.get(str(ref.get("name"))) or {}).get("data") or {}
        value = data.get(str(ref.get("key")))
        return None if value is None else str(value)
    path = str((source.get("fieldRef") or {}).get("fieldPath") or "")
    match = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if match:
        return str((pod.get("metadata") or {}).get(match.group(1), {}).get(match.group(2), ""))
    fields = {
        "metadata.name": meta.name(pod),
        "metadata.namespace": meta.namespace(pod),
        "metadata.uid": meta.uid(pod),
        "spec.nodeName": (pod.get("spec") or {}).get("nodeName", ""),
        "spec.serviceAccountName": (pod.get("spec") or {}).get("serviceAccountName", ""),
        "status.hostIP": (pod.get("status") or {}).get("hostIP", ""),
        "status.podIP": (pod.get("status") or {}).get("podIP", ""),
    }
    return str(fields[path]) if path in fields else None


def _time(value: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError:
        return datetime.fromtimestamp(0, UTC)


def format_timestamp(t: datetime) -> str:
    """RFC 3339 with nanoseconds, as the container runtime stamps log lines."""
    t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond * 1000:09d}Z"


def render(log: list[Line], options: LogOptions, *, now: datetime) -> bytes:
    """The selected lines as the response body: since, tail, timestamps (limitBytes is
    applied by the caller, over the whole stream)."""
    since = options.since_time
    if options.since_seconds is not None:
        since = now - timedelta(seconds=options.since_seconds)
    selected = [line for line in log if since is None or line[0] >= since]
    if options.tail_lines is not None:
        selected = selected[len(selected) - options.tail_lines :] if options.tail_lines else []
    return b"".join(render_line(line, options) for line in selected)


def render_line(line: Line, options: LogOptions) -> bytes:
    text = line[1] + "\n"
    if options.timestamps:
        text = format_timestamp(line[0]) + " " + text
    return text.encode()
