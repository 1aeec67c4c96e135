"""Additive reconciliation of the bootstrap policy (component-helpers auth/rbac/reconciliation).

`reconcile(existing, desired)` returns what to write so that the stored object holds everything
the bootstrap object does, or None when nothing is to be written. It adds missing rules (as the
uncovered pieces), aggregation selectors, labels, annotations and binding subjects and keeps
everything else; an object annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` is
left alone. Like upstream, it drops an aggregationRule from a role that the policy does not
aggregate, and a binding whose roleRef differs is recreated (`must_recreate`).
"""

from __future__ import annotations

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import prune
from draplane.apiserver.authorization.bootstrap import AUTOUPDATE
from draplane.apiserver.authorization.escalation import covers
from draplane.apiserver.authorization.rules import rules_of


def _subject_key(subject: Obj) -> tuple[str, str, str, str]:
    return (
        str(subject.get("kind") or ""),
        str(subject.get("apiGroup") or ""),
        str(subject.get("name") or ""),
        str(subject.get("namespace") or ""),
    )


def _role_ref(binding: Obj) -> tuple[str, str, str]:
    ref = binding.get("roleRef") or {}
    return str(ref.get("apiGroup") or ""), str(ref.get("kind") or ""), str(ref.get("name") or "")


def must_recreate(existing: Obj, desired: Obj) -> bool:
    """A binding whose roleRef differs is deleted and created again (roleRef is immutable)."""
    is_binding = desired.get("kind") in (kinds.ROLE_BINDINGS.kind, kinds.CLUSTER_ROLE_BINDINGS.kind)
    return is_binding and _role_ref(existing) != _role_ref(desired)


def _reconcile_rules(result: Obj, existing: Obj, desired: Obj) -> None:
    _, missing = covers(rules_of(existing), rules_of(desired))
    if missing:
        result["rules"] = [*(existing.get("rules") or []), *(r.to_wire() for r in missing)]
    want, have = desired.get("aggregationRule"), existing.get("aggregationRule")
    if want is None:
        # Not an aggregated role: an aggregationRule would overwrite its rules.
        result.pop("aggregationRule", None)
        return
    have_selectors = list((have or {}).get("clusterRoleSelectors") or [])
    known = [prune(s) for s in have_selectors]
    added = [s for s in want.get("clusterRoleSelectors") or [] if prune(s) not in known]
    if added:
        result["aggregationRule"] = {
            **(have or {}),
            "clusterRoleSelectors": [*have_selectors, *added],
        }


def reconcile(existing: Obj | None, desired: Obj) -> Obj | None:
    """The object to write so that `existing` holds everything `desired` does; None if nothing.

    For a binding whose roleRef differs the answer is `desired` itself (see `must_recreate`)."""
    if existing is None:
        return meta.deep_copy(desired)
    if meta.annotations(existing).get(AUTOUPDATE) == "false":
        return None
    if must_recreate(existing, desired):
        return meta.deep_copy(desired)
    result = meta.deep_copy(existing)
    md = result.setdefault("metadata", {})
    for key in ("annotations", "labels"):
        merged = {**(meta.metadata(desired).get(key) or {}), **(md.get(key) or {})}
        if merged:
            md[key] = merged
    if desired.get("kind") in (kinds.ROLES.kind, kinds.CLUSTER_ROLES.kind):
        _reconcile_rules(result, existing, desired)
    else:
        have = existing.get("subjects") or []
        keys = {_subject_key(s) for s in have}
        added = [s for s in desired.get("subjects") or [] if _subject_key(s) not in keys]
        if added:
            result["subjects"] = [*have, *added]
    return None if result == existing else result
