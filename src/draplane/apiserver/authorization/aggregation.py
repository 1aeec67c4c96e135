"""ClusterRole aggregation, as a pure function (pkg/controller/clusterroleaggregation).

An aggregated ClusterRole's rules are the union of the rules of every *other* ClusterRole that one
of its `aggregationRule.clusterRoleSelectors` matches: selector by selector, matching roles in
name order, each rule once (rules equal up to empty fields are duplicates).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.selectors import LabelSelector
from draplane.api.validation.objectmeta import prune


def selectors(role: Obj) -> list[LabelSelector] | None:
    """The role's aggregation selectors; None when it is not aggregated.

    A malformed selector raises a 400 StatusError (validation rejects such roles)."""
    rule = role.get("aggregationRule")
    if not isinstance(rule, dict):
        return None
    raw = rule.get("clusterRoleSelectors")
    if not isinstance(raw, list):
        return []
    return [LabelSelector.from_label_selector(s) for s in raw if isinstance(s, dict)]


def _normalized(rule: Any) -> Any:
    return prune(rule) if isinstance(rule, dict) else rule


def aggregated_rules(role: Obj, all_cluster_roles: Iterable[Obj]) -> list[Obj]:
    """The rules the aggregation controller writes into `role` (empty when not aggregated)."""
    matchers = selectors(role) or []
    others = sorted(
        (r for r in all_cluster_roles if meta.name(r) != meta.name(role)), key=meta.name
    )
    out: list[Obj] = []
    seen: list[Any] = []
    for selector in matchers:
        for other in others:
            if not selector.matches(meta.labels(other)):
                continue
            rules = other.get("rules")
            for rule in rules if isinstance(rules, list) else []:
                key = _normalized(rule)
                if key not in seen:
                    seen.append(key)
                    out.append(meta.deep_copy(rule) if isinstance(rule, dict) else rule)
    return out


def rules_differ(role: Obj, rules: list[Obj]) -> bool:
    """Whether writing `rules` would change the role (empty fields do not count)."""
    current = role.get("rules")
    current = current if isinstance(current, list) else []
    return [_normalized(r) for r in current] != [_normalized(r) for r in rules]
