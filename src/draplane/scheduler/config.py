"""Scheduler configuration: `Profile` and the `KubeSchedulerConfiguration` YAML reader.

Supported from `kubescheduler.config.k8s.io/v1`: one entry in `profiles` with `schedulerName`,
`plugins.<point>.enabled/disabled` (including `multiPoint`, `"*"` to disable all defaults) and
`pluginConfig`; top-level `podInitialBackoffSeconds`, `podMaxBackoffSeconds`,
`percentageOfNodesToScore`. Anything else is rejected with a 422-style field error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from draplane.api import errors
from draplane.api.errors import FieldError
from draplane.api.meta import Obj
from draplane.scheduler.plugins import names

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
MULTI_POINT = "multiPoint"


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0
    """Score weight; 0 means the default (1)."""


@dataclass(frozen=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()
    """Plugin names; "*" disables every default of this point."""


DEFAULT_MULTI_POINT = (
    PluginRef(names.PRIORITY_SORT),
    PluginRef(names.NODE_UNSCHEDULABLE),
    PluginRef(names.NODE_NAME),
    PluginRef(names.TAINT_TOLERATION, 3),
    PluginRef(names.NODE_AFFINITY, 2),
    PluginRef(names.NODE_RESOURCES_FIT, 1),
    PluginRef(names.DYNAMIC_RESOURCES),
    PluginRef(names.DEFAULT_BINDER),
)


@dataclass(frozen=True)
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: dict[str, PluginSet] = field(default_factory=dict)
    """Extension point (or multiPoint) -> user changes on top of the defaults."""
    plugin_config: dict[str, Obj] = field(default_factory=dict)


@dataclass(frozen=True)
class SchedulerConfig:
    profile: Profile = field(default_factory=Profile)
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    percentage_of_nodes_to_score: int = 0
    """0 = adaptive, as kube-scheduler."""


_TOP_LEVEL = {
    "apiVersion",
    "kind",
    "profiles",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "percentageOfNodesToScore",
}


def _invalid(causes: list[FieldError]) -> errors.StatusError:
    return errors.invalid_object(KIND, "", causes)


def load_config(path: str) -> SchedulerConfig:
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as err:
        raise errors.bad_request(f"reading scheduler config {path}: {err}") from err
    except yaml.YAMLError as err:
        raise errors.bad_request(f"parsing scheduler config {path}: {err}") from err
    return parse_config(doc)


def parse_config(doc: Any) -> SchedulerConfig:
    """A SchedulerConfig from a decoded KubeSchedulerConfiguration; raises StatusError."""
    if not isinstance(doc, dict):
        raise _invalid([errors.invalid("", doc, "must be a KubeSchedulerConfiguration object")])
    causes: list[FieldError] = []
    if doc.get("apiVersion") != API_VERSION:
        causes.append(errors.not_supported("apiVersion", doc.get("apiVersion"), [API_VERSION]))
    if doc.get("kind") != KIND:
        causes.append(errors.not_supported("kind", doc.get("kind"), [KIND]))
    causes += [
        errors.forbidden(k, "not supported by draplane") for k in sorted(set(doc) - _TOP_LEVEL)
    ]
    profiles = doc.get("profiles") or []
    if not isinstance(profiles, list) or len(profiles) > 1:
        causes.append(
            errors.invalid(
                "profiles",
                len(profiles) if isinstance(profiles, list) else profiles,
                "draplane supports exactly one profile",
            )
        )
        profiles = []
    profile = _parse_profile(profiles[0], "profiles[0]", causes) if profiles else Profile()
    initial = _number(doc, "podInitialBackoffSeconds", 1.0, causes)
    maximum = _number(doc, "podMaxBackoffSeconds", 10.0, causes)
    percentage = int(_number(doc, "percentageOfNodesToScore", 0, causes))
    if not 0 <= percentage <= 100:
        causes.append(
            errors.invalid("percentageOfNodesToScore", percentage, "not in valid range [0-100]")
        )
    if maximum < initial:
        causes.append(
            errors.invalid(
                "podMaxBackoffSeconds",
                maximum,
                "must be greater than or equal to podInitialBackoffSeconds",
            )
        )
    if causes:
        raise _invalid(causes)
    return SchedulerConfig(profile, initial, maximum, percentage)


def _number(doc: Obj, key: str, default: float, causes: list[FieldError]) -> float:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        causes.append(errors.invalid(key, value, "must be a non-negative number"))
        return default
    return float(value)


def _parse_profile(raw: Any, path: str, causes: list[FieldError]) -> Profile:
    if not isinstance(raw, dict):
        causes.append(errors.invalid(path, raw, "must be an object"))
        return Profile()
    for k in sorted(set(raw) - {"schedulerName", "plugins", "pluginConfig"}):
        causes.append(errors.forbidden(f"{path}.{k}", "not supported by draplane"))
    name = raw.get("schedulerName") or DEFAULT_SCHEDULER_NAME
    plugins: dict[str, PluginSet] = {}
    raw_plugins = raw.get("plugins") or {}
    if not isinstance(raw_plugins, dict):
        causes.append(errors.invalid(f"{path}.plugins", raw_plugins, "must be an object"))
        raw_plugins = {}
    for point, raw_set in raw_plugins.items():
        point_path = f"{path}.plugins.{point}"
        if point not in (*EXTENSION_POINTS, MULTI_POINT):
            causes.append(errors.not_supported(point_path, point, [*EXTENSION_POINTS, MULTI_POINT]))
            continue
        plugins[point] = _parse_plugin_set(raw_set, point_path, causes)
    config: dict[str, Obj] = {}
    for i, entry in enumerate(raw.get("pluginConfig") or []):
        entry_path = f"{path}.pluginConfig[{i}]"
        if not isinstance(entry, dict) or not entry.get("name"):
            causes.append(errors.required(f"{entry_path}.name"))
            continue
        if entry["name"] in config:
            causes.append(errors.duplicate(f"{entry_path}.name", entry["name"]))
        args = entry.get("args") or {}
        if not isinstance(args, dict):
            causes.append(errors.invalid(f"{entry_path}.args", args, "must be an object"))
            continue
        config[entry["name"]] = dict(args)
    return Profile(str(name), plugins, config)


def _parse_plugin_set(raw: Any, path: str, causes: list[FieldError]) -> PluginSet:
    if not isinstance(raw, dict):
        causes.append(errors.invalid(path, raw, "must be an object"))
        return PluginSet()
    enabled: list[PluginRef] = []
    for i, entry in enumerate(raw.get("enabled") or []):
        if not isinstance(entry, dict) or not entry.get("name"):
            causes.append(errors.required(f"{path}.enabled[{i}].name"))
            continue
        weight = entry.get("weight", 0)
        if not isinstance(weight, int) or weight < 0:
            causes.append(
                errors.invalid(
                    f"{path}.enabled[{i}].weight", weight, "must be a non-negative integer"
                )
            )
            weight = 0
        enabled.append(PluginRef(str(entry["name"]), weight))
    disabled: list[str] = []
    for i, entry in enumerate(raw.get("disabled") or []):
        if not isinstance(entry, dict) or not entry.get("name"):
            causes.append(errors.required(f"{path}.disabled[{i}].name"))
            continue
        disabled.append(str(entry["name"]))
    return PluginSet(tuple(enabled), tuple(disabled))
