"""`DynamicResourcesArgs` of the structured DynamicResources plugin (kube-scheduler config v1,
1.36): `filterTimeout` (default 10s, 0 disables; DRASchedulerFilterTimeout is beta and on) and
`bindingTimeout` (default 600s, at least 1s; DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus are beta and on), as Go durations in the profile's `pluginConfig`.
ValidateDynamicResourcesArgs' messages; other fields are refused."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from draplane.api import errors
from draplane.api.errors import FieldError
from draplane.scheduler.framework.interfaces import PluginArgs
from draplane.scheduler.plugins import names

DEFAULT_FILTER_TIMEOUT = 10.0
DEFAULT_BINDING_TIMEOUT = 600.0
_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


@dataclass(frozen=True)
class DynamicResourcesArgs:
    filter_timeout: float = DEFAULT_FILTER_TIMEOUT
    """Seconds one node's allocation may take in Filter; 0: no limit."""
    binding_timeout: float = DEFAULT_BINDING_TIMEOUT
    """Seconds PreBind waits for binding conditions after `allocationTimestamp`."""


def parse_duration(text: str) -> float:
    """Seconds of a Go duration (`time.ParseDuration`: "10s", "1m30s", "-2.5ms", "0")."""
    body = text[1:] if text[:1] in "+-" else text
    sign = -1.0 if text.startswith("-") else 1.0
    if body == "0":
        return 0.0
    parts = _PART.findall(body)
    if not body or "".join(n + u for n, u in parts) != body:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * sum(float(n) * _UNITS[u] for n, u in parts)


def _duration(args: dict[str, Any], key: str, causes: list[FieldError]) -> float | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except ValueError as e:
            causes.append(errors.invalid(f"args.{key}", value, str(e)))
            return None
    causes.append(errors.invalid(f"args.{key}", value, "must be a duration string"))
    return None


def parse_args(args: PluginArgs) -> DynamicResourcesArgs:
    """The plugin's args with upstream's defaults; a 422 Invalid naming each bad field."""
    if not args:
        return DynamicResourcesArgs()
    causes: list[FieldError] = [
        errors.forbidden(f"args.{k}", "not supported by draplane")
        for k in sorted(set(args) - {"filterTimeout", "bindingTimeout", "apiVersion", "kind"})
    ]
    filter_timeout = _duration(args, "filterTimeout", causes)
    binding_timeout = _duration(args, "bindingTimeout", causes)
    if filter_timeout is not None and filter_timeout < 0:
        causes.append(
            errors.invalid("args.filterTimeout", args["filterTimeout"], "must be zero or positive")
        )
    if binding_timeout is not None and binding_timeout < 1:
        causes.append(
            errors.invalid(
                "args.bindingTimeout", args["bindingTimeout"], "must be at least 1 second"
            )
        )
    if causes:
        raise errors.invalid_object("DynamicResourcesArgs", names.DYNAMIC_RESOURCES, causes)
    return DynamicResourcesArgs(
        DEFAULT_FILTER_TIMEOUT if filter_timeout is None else filter_timeout,
        DEFAULT_BINDING_TIMEOUT if binding_timeout is None else binding_timeout,
    )
