"""RBAC policy rules: matching a request against a rule; breaking rules down and compacting them.

`PolicyRule` is the frozen form of a wire rule (`{verbs, apiGroups, resources, resourceNames,
nonResourceURLs}`). Matching follows pkg/apis/rbac/v1/evaluation_helpers.go: verbs, groups and
resources match exactly or by `*`; `*/<sub>` matches that subresource of any resource; a rule
with resourceNames never matches a request without a name; a non-resource URL ending in `*`
matches by prefix. `breakdown` and `compact` are the escalation check's helpers (one verb, group,
resource and name per piece; pieces differing only by verb merged again).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from draplane.api.meta import Obj
from draplane.apiserver.authorization import Attributes, NonResourceRule, ResourceRule

ALL = "*"


@dataclass(frozen=True, slots=True)
class PolicyRule:
    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, rule: Any) -> PolicyRule:
        """A stored rule; fields of the wrong type count as empty (validation rejects them)."""
        if not isinstance(rule, dict):
            return cls()
        return cls(
            _strings(rule.get("verbs")),
            _strings(rule.get("apiGroups")),
            _strings(rule.get("resources")),
            _strings(rule.get("resourceNames")),
            _strings(rule.get("nonResourceURLs")),
        )

    def to_wire(self) -> Obj:
        """The wire rule, empty fields left out, in the Go struct's field order."""
        out: Obj = {"verbs": list(self.verbs)}
        for key, values in (
            ("apiGroups", self.api_groups),
            ("resources", self.resources),
            ("resourceNames", self.resource_names),
            ("nonResourceURLs", self.non_resource_urls),
        ):
            if values:
                out[key] = list(values)
        return out

    def compact_string(self) -> str:
        """rbacv1helpers.CompactString, as escalation errors print a rule."""
        parts = [
            f"{label}:{go_quote_list(values)}"
            for label, values in (
                ("APIGroups", self.api_groups),
                ("Resources", self.resources),
                ("NonResourceURLs", self.non_resource_urls),
                ("ResourceNames", self.resource_names),
                ("Verbs", self.verbs),
            )
            if values
        ]
        return "{" + ", ".join(parts) + "}"


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def rules_of(role: Obj) -> tuple[PolicyRule, ...]:
    """The rules of a Role or ClusterRole object."""
    rules = role.get("rules")
    if not isinstance(rules, list):
        return ()
    return tuple(PolicyRule.from_wire(r) for r in rules)


# --- matching ---------------------------------------------------------------------------------


def verb_matches(rule: PolicyRule, verb: str) -> bool:
    return ALL in rule.verbs or verb in rule.verbs


def api_group_matches(rule: PolicyRule, group: str) -> bool:
    return ALL in rule.api_groups or group in rule.api_groups


def resource_matches(rule: PolicyRule, combined: str, subresource: str) -> bool:
    """`combined` is `res` or `res/sub`; `*/sub` matches `sub` of any resource."""
    for resource in rule.resources:
        if resource in (ALL, combined):
            return True
        if subresource and resource == "*/" + subresource:
            return True
    return False


def resource_name_matches(rule: PolicyRule, name: str) -> bool:
    return not rule.resource_names or name in rule.resource_names


def non_resource_url_matches(rule: PolicyRule, path: str) -> bool:
    for url in rule.non_resource_urls:
        if url in (ALL, path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(attrs: Attributes, rule: PolicyRule) -> bool:
    """RuleAllows: does `rule` allow the request?"""
    if attrs.resource_request:
        combined = attrs.resource
        if attrs.subresource:
            combined = f"{attrs.resource}/{attrs.subresource}"
        return (
            verb_matches(rule, attrs.verb)
            and api_group_matches(rule, attrs.api_group)
            and resource_matches(rule, combined, attrs.subresource)
            and resource_name_matches(rule, attrs.name)
        )
    return verb_matches(rule, attrs.verb) and non_resource_url_matches(rule, attrs.path)


def rules_allow(attrs: Attributes, rules: Iterable[PolicyRule]) -> bool:
    return any(rule_allows(attrs, rule) for rule in rules)


# --- breakdown, compaction and the review form ------------------------------------------------


def breakdown(rule: PolicyRule) -> list[PolicyRule]:
    """BreakdownRule: one verb x group x resource (x name) per piece; URLs x verbs."""
    pieces: list[PolicyRule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    pieces.extend(
                        PolicyRule((verb,), (group,), (resource,), (name,))
                        for name in rule.resource_names
                    )
                else:
                    pieces.append(PolicyRule((verb,), (group,), (resource,)))
    for url in rule.non_resource_urls:
        pieces.extend(PolicyRule((verb,), non_resource_urls=(url,)) for verb in rule.verbs)
    return pieces


def compact(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """CompactRules: rules with one group, one resource, at most one name and nothing else are
    merged per (group, resource, name), their verbs appended; other rules are kept as they are."""
    kept: list[PolicyRule] = []
    merged: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for rule in rules:
        simple = (
            len(rule.api_groups) == 1
            and len(rule.resources) == 1
            and len(rule.resource_names) <= 1
            and not rule.non_resource_urls
        )
        if not simple:
            kept.append(rule)
            continue
        key = (rule.api_groups[0], rule.resources[0], rule.resource_names)
        merged.setdefault(key, []).extend(rule.verbs)
    kept.extend(
        PolicyRule(tuple(verbs), (group,), (resource,), names)
        for (group, resource, names), verbs in merged.items()
    )
    return kept


def review_rules(
    rules: Iterable[PolicyRule],
) -> tuple[tuple[ResourceRule, ...], tuple[NonResourceRule, ...]]:
    """What RulesFor reports: a rule with resources is a resource rule, one with URLs a
    non-resource rule (a rule with both is reported as both)."""
    resource_rules: list[ResourceRule] = []
    non_resource_rules: list[NonResourceRule] = []
    for rule in rules:
        if rule.resources:
            resource_rules.append(
                ResourceRule(rule.verbs, rule.api_groups, rule.resources, rule.resource_names)
            )
        if rule.non_resource_urls:
            non_resource_rules.append(NonResourceRule(rule.verbs, rule.non_resource_urls))
    return tuple(resource_rules), tuple(non_resource_rules)


def from_review_rules(
    resource_rules: Iterable[ResourceRule], non_resource_rules: Iterable[NonResourceRule]
) -> list[PolicyRule]:
    """The inverse of `review_rules`, for covering checks over a `RuleResolver`'s answer."""
    out = [PolicyRule(r.verbs, r.api_groups, r.resources, r.resource_names) for r in resource_rules]
    out.extend(
        PolicyRule(r.verbs, non_resource_urls=r.non_resource_urls) for r in non_resource_rules
    )
    return out


# --- Go formatting ----------------------------------------------------------------------------


def go_quote(value: str) -> str:
    """strconv.Quote for the characters names and rules contain."""
    out = ['"']
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif not ch.isprintable():
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_quote_list(values: Iterable[str]) -> str:
    """fmt's %q of a []string: `["a" "b"]`."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"
