"""What a resource.k8s.io/v1 allocation gives one driver: its device results and the opaque
config that applies to each (shared by the example driver's kubelet plugin, which prepares from
it, and the container log, which shows what the container got).

As upstream's e2e test driver does, opaque parameters are a JSON object of strings; a container
sees each key as env variable `admin_<key>` (config from the DeviceClass) or `user_<key>` (from
the claim), class config first so the claim's wins. A config entry applies to a result when its
`requests` is empty or names the result's request (`req` also covers `req/sub`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

Obj = dict[str, Any]

CDI_KIND = "gpu"
CDI_ENV_CONDITION = "draplane.dev/CDIEnv"
"""A pod condition a node with kubelet plugins writes (status True, reason `Injected`): its
message is, per container, the env its claims' CDI devices inject (a JSON object of container
name -> {name: value}), which the container log shows."""
_PREFIX = {"FromClass": "admin_", "FromClaim": "user_"}


@dataclass(frozen=True)
class PreparedDevice:
    request: str
    pool: str
    device: str
    cdi_device_ids: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    admin_access: bool = False
    share_id: str = ""


def applies(config: Obj, request: str) -> bool:
    names = config.get("requests") or []
    return not names or request in names or request.split("/", 1)[0] in names


def config_env(configs: list[Obj], driver: str, request: str) -> dict[str, str]:
    """The env a result of `request` gets from the allocation's `devices.config` of `driver`."""
    env: dict[str, str] = {}
    ordered = sorted(configs, key=lambda c: 0 if c.get("source") == "FromClass" else 1)
    for config in ordered:
        opaque = config.get("opaque") or {}
        if opaque.get("driver") != driver or not applies(config, request):
            continue
        prefix = _PREFIX.get(str(config.get("source") or ""), "user_")
        parameters = opaque.get("parameters")
        if isinstance(parameters, dict):
            env.update({f"{prefix}{k}": _text(v) for k, v in parameters.items()})
    return env


def prepared_devices(claim: Obj, driver: str) -> list[PreparedDevice]:
    """The devices of `driver` in the claim's allocation, in result order, with CDI ids
    `<driver>/gpu=<device>` and each one's env (also `GPU_DEVICE_<i>` per device of the request,
    as the example driver sets it)."""
    devices = ((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}
    configs = list(devices.get("config") or [])
    out: list[PreparedDevice] = []
    for index, result in enumerate(
        r for r in devices.get("results") or [] if r.get("driver") == driver
    ):
        request = str(result.get("request") or "")
        name = str(result.get("device") or "")
        env = {f"GPU_DEVICE_{index}": name, **config_env(configs, driver, request)}
        out.append(
            PreparedDevice(
                request=request,
                pool=str(result.get("pool") or ""),
                device=name,
                cdi_device_ids=(f"{driver}/{CDI_KIND}={name}",),
                env=env,
                admin_access=bool(result.get("adminAccess")),
                share_id=str(result.get("shareID") or ""),
            )
        )
    return out


def drivers(claim: Obj) -> list[str]:
    """The drivers of a v1 allocation's results, in first-seen order."""
    devices = ((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}
    seen: dict[str, None] = {}
    for result in devices.get("results") or []:
        seen.setdefault(str(result.get("driver") or ""), None)
    return [d for d in seen if d]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return orjson.dumps(value).decode()
