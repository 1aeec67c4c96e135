"""Resolving a `Profile` into plugin instances per extension point, and validating it.

Each enabled plugin is instantiated once. A multiPoint plugin joins every point whose method
it has; plugins enabled explicitly at a point come first there (as in kube-scheduler).
Invariants: exactly one QueueSort plugin, at least one Bind plugin, a positive weight for every
Score plugin. Violations raise a 422 StatusError naming the profile field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from draplane.api import errors
from draplane.api.errors import FieldError
from draplane.scheduler.config import (
    DEFAULT_MULTI_POINT,
    EXTENSION_POINTS,
    KIND,
    MULTI_POINT,
    PluginRef,
    PluginSet,
    Profile,
)
from draplane.scheduler.framework.handle import Handle
from draplane.scheduler.framework.interfaces import Plugin, Registry

POINT_METHODS = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}


@dataclass
class ResolvedProfile:
    plugins: dict[str, Plugin] = field(default_factory=dict)
    """Every instantiated plugin by name, in enablement order."""
    points: dict[str, list[Plugin]] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)


def _implements(plugin: Plugin, point: str) -> bool:
    return callable(getattr(plugin, POINT_METHODS[point], None))


def _merge(defaults: tuple[PluginRef, ...], user: PluginSet | None) -> list[PluginRef]:
    if user is None:
        return list(defaults)
    disabled = set(user.disabled)
    refs = [] if "*" in disabled else [r for r in defaults if r.name not in disabled]
    enabled_names = {r.name for r in user.enabled}
    return [*user.enabled, *(r for r in refs if r.name not in enabled_names)]


def resolve_profile(*, profile: Profile, registry: Registry, handle: Handle) -> ResolvedProfile:
    causes: list[FieldError] = []
    base = "profiles[0]"
    for name in profile.plugin_config:
        if name not in registry:
            causes.append(
                errors.not_found_field(f"{base}.pluginConfig", name, "no plugin with this name")
            )
    multi = _merge(DEFAULT_MULTI_POINT, profile.plugins.get(MULTI_POINT))
    resolved = ResolvedProfile()
    weights = {r.name: r.weight for r in multi}

    def instance(ref: PluginRef, path: str) -> Plugin | None:
        if ref.name not in resolved.plugins:
            factory = registry.get(ref.name)
            if factory is None:
                causes.append(errors.not_found_field(path, ref.name, "no plugin with this name"))
                return None
            resolved.plugins[ref.name] = factory(profile.plugin_config.get(ref.name), handle)
        return resolved.plugins[ref.name]

    multi_plugins = [(r, instance(r, f"{base}.plugins.{MULTI_POINT}")) for r in multi]
    for point in EXTENSION_POINTS:
        user = profile.plugins.get(point, PluginSet())
        disabled = set(user.disabled)
        chosen: list[Plugin] = []
        for i, ref in enumerate(user.enabled):
            path = f"{base}.plugins.{point}.enabled[{i}]"
            plugin = instance(ref, path)
            if plugin is not None and not _implements(plugin, point):
                causes.append(errors.invalid(path, ref.name, f"plugin does not implement {point}"))
            elif plugin is not None:
                chosen.append(plugin)
                weights[ref.name] = ref.weight or weights.get(ref.name, 0)
        for ref, plugin in multi_plugins:
            if plugin is None or "*" in disabled or ref.name in disabled:
                continue
            if _implements(plugin, point) and plugin not in chosen:
                chosen.append(plugin)
        resolved.points[point] = chosen
    resolved.weights = {p.name: weights.get(p.name) or 1 for p in resolved.points["score"]}
    causes += _invariant_violations(resolved, base)
    if causes:
        raise errors.invalid_object(KIND, "", causes)
    return resolved


def _invariant_violations(resolved: ResolvedProfile, base: str) -> list[FieldError]:
    causes: list[FieldError] = []
    if len(resolved.points["queueSort"]) != 1:
        causes.append(
            errors.invalid(
                f"{base}.plugins.queueSort",
                [p.name for p in resolved.points["queueSort"]],
                "exactly one queue sort plugin must be enabled",
            )
        )
    if not resolved.points["bind"]:
        causes.append(errors.required(f"{base}.plugins.bind", "at least one bind plugin is needed"))
    return causes
