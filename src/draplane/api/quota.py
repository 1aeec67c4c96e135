"""ResourceQuota evaluation shared by the quota admission plugin and the resource quota
controller (k8s.io/apiserver/pkg/quota/v1 and pkg/quota/v1/evaluator/core).

An `Evaluator` knows, for one group/resource, which quota resource names it charges
(`matches`), which operations it charges (`handles`), whether a quota's scopes select an object
(`matches_scopes`) and the object's usage (`quotausage`). `evaluator_for(group_resource, mode)`
returns the one of pods, services, PersistentVolumeClaims, the mode's ResourceClaims, or an
object count evaluator (`count/<resource>.<group>`, with the legacy names `configmaps`,
`secrets`, `resourcequotas`, `replicationcontrollers`). Quantities are exact Fractions;
`format_quantity` writes them back as canonical quantity strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from draplane.api import quotausage, versions
from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.api.quotausage import Usage, UsageContext
from draplane.api.validation.quota import is_native

LEGACY_COUNTS = {
    "configmaps": "configmaps",
    "secrets": "secrets",
    "resourcequotas": "resourcequotas",
    "replicationcontrollers": "replicationcontrollers",
}
"""Object counts with a bare quota name besides `count/<resource>`."""
_POD_RESOURCES = frozenset(
    {"count/pods", "pods", "cpu", "memory", "ephemeral-storage"}
    | {"requests.cpu", "requests.memory", "requests.ephemeral-storage"}
    | {"limits.cpu", "limits.memory", "limits.ephemeral-storage"}
)
_SERVICE_RESOURCES = frozenset(
    {"count/services", "services", "services.loadbalancers", "services.nodeports"}
)
_PVC_RESOURCES = frozenset(
    {"count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage"}
)


def object_count_name(group_resource: str) -> str:
    """`count/pods`, `count/resourceclaims.resource.k8s.io`."""
    return f"count/{group_resource}"


def is_extended_for_quota(name: str) -> bool:
    """An extended resource a quota may limit: only as `requests.<name>` (no overcommit)."""
    return not is_native(name) and name.startswith("requests.")


@dataclass(frozen=True)
class Evaluator:
    group_resource: str
    matches_name: Callable[[str], bool]
    usage_of: Callable[[Obj, UsageContext], Usage]
    operations: tuple[str, ...] = ("CREATE",)
    scoped: bool = False
    """Whether quota scopes apply (pods); for other kinds a scoped quota never matches."""

    def handles(self, operation: str, subresource: str) -> bool:
        return not subresource and operation in self.operations

    def matching(self, names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if self.matches_name(n))

    def usage(self, obj: Obj, ctx: UsageContext) -> Usage:
        return self.usage_of(obj, ctx)

    def matches_scopes(self, quota: Obj, obj: Obj) -> bool:
        return all(self._scope_matches(sel, obj) for sel in scope_selectors(quota))

    def matches(self, quota: Obj, obj: Obj) -> bool:
        """generic.Matches: the quota limits a resource of this kind and selects `obj`."""
        return bool(self.matching(hard(quota))) and self.matches_scopes(quota, obj)

    def _scope_matches(self, selector: Obj, obj: Obj) -> bool:
        return self.scoped and pod_matches_scope(obj, selector)


def scope_selectors(quota: Obj) -> list[Obj]:
    """The quota's scopes as Exists requirements, then its scopeSelector's requirements."""
    spec = quota.get("spec") or {}
    out: list[Obj] = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    out.extend(((spec.get("scopeSelector") or {}).get("matchExpressions")) or [])
    return out


def _affinity_is_cross_namespace(pod: Obj) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        required = terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        preferred = [
            (t or {}).get("podAffinityTerm") or {}
            for t in terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        for term in [*required, *preferred]:
            if term.get("namespaces") or term.get("namespaceSelector") is not None:
                return True
    return False


def pod_matches_scope(pod: Obj, selector: Obj) -> bool:
    """podMatchesScopeFunc."""
    spec = pod.get("spec") or {}
    scope, op = selector.get("scopeName"), selector.get("operator")
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None
    if scope == "NotTerminating":
        return spec.get("activeDeadlineSeconds") is None
    if scope == "BestEffort":
        return quotausage.pod_is_best_effort(pod)
    if scope == "NotBestEffort":
        return not quotausage.pod_is_best_effort(pod)
    if scope == "CrossNamespacePodAffinity":
        return _affinity_is_cross_namespace(pod)
    if scope == "PriorityClass":
        value = str(spec.get("priorityClassName") or "")
        values = selector.get("values") or []
        if op == "Exists":
            return bool(value)
        if op == "In":
            return value in values
        if op == "NotIn":
            return value not in values
        return False
    return False


def _pod_name(name: str) -> bool:
    return (
        name in _POD_RESOURCES
        or name.startswith(("hugepages-", "requests.hugepages-"))
        or is_extended_for_quota(name)
    )


def _pvc_name(name: str) -> bool:
    return name in _PVC_RESOURCES or (
        quotausage.STORAGE_CLASS_SUFFIX in name
        and name.endswith(("/persistentvolumeclaims", "/requests.storage"))
    )


def _structured_claim_name(name: str) -> bool:
    return (
        name == "count/resourceclaims.resource.k8s.io"
        or name.endswith(quotausage.DEVICES_PER_CLASS)
        or name.startswith(quotausage.IMPLICIT_EXTENDED_PER_CLASS)
        or is_extended_for_quota(name)
    )


def _classic_claim_name(name: str) -> bool:
    return name in ("count/resourceclaims.resource.k8s.io", "resourceclaims") or name.endswith(
        quotausage.CLAIMS_PER_RESOURCE_CLASS
    )


def _object_count(group_resource: str) -> Evaluator:
    names = {object_count_name(group_resource)}
    if group_resource in LEGACY_COUNTS:
        names.add(LEGACY_COUNTS[group_resource])
    charged = {n: Fraction(1) for n in names}
    return Evaluator(group_resource, names.__contains__, lambda _obj, _ctx: dict(charged))


_CLAIMS = "resourceclaims.resource.k8s.io"


def evaluator_for(group_resource: str, mode: versions.Mode) -> Evaluator:
    if group_resource == "pods":
        return Evaluator("pods", _pod_name, quotausage.pod_usage, scoped=True)
    if group_resource == "services":
        return Evaluator(
            "services",
            _SERVICE_RESOURCES.__contains__,
            lambda obj, _ctx: quotausage.service_usage(obj),
            ("CREATE", "UPDATE"),
        )
    if group_resource == "persistentvolumeclaims":
        return Evaluator(
            group_resource,
            _pvc_name,
            lambda obj, _ctx: quotausage.persistent_volume_claim_usage(obj),
            ("CREATE", "UPDATE"),
        )
    if group_resource == _CLAIMS and mode.structured:
        return Evaluator(
            _CLAIMS,
            _structured_claim_name,
            quotausage.structured_claim_usage,
            ("CREATE", "UPDATE"),
        )
    if group_resource == _CLAIMS:
        return Evaluator(
            _CLAIMS,
            _classic_claim_name,
            lambda obj, _ctx: quotausage.classic_claim_usage(obj),
            ("CREATE", "UPDATE"),
        )
    return _object_count(group_resource)


def group_resource_of(name: str) -> str | None:
    """The group/resource a quota resource name counts, for the names whose evaluator is not
    one of the kinds above: `count/deployments.apps` -> `deployments.apps`."""
    if name.startswith("count/"):
        return name.removeprefix("count/")
    return LEGACY_COUNTS.get(name)


# --- resource lists ---------------------------------------------------------------------------


def parse_list(values: Any) -> Usage:
    out: Usage = {}
    if isinstance(values, dict):
        for name, raw in values.items():
            try:
                out[str(name)] = parse_quantity(raw)
            except ValueError:
                continue
    return out


def hard(quota: Obj) -> Usage:
    """status.hard: what the controller last observed of spec.hard (what admission enforces)."""
    return parse_list((quota.get("status") or {}).get("hard"))


def used(quota: Obj) -> Usage:
    return parse_list((quota.get("status") or {}).get("used"))


def add(a: Usage, b: Usage) -> Usage:
    out = dict(a)
    for name, value in b.items():
        out[name] = out.get(name, Fraction(0)) + value
    return out


def subtract_non_negative(a: Usage, b: Usage) -> Usage:
    return {n: max(v - b.get(n, Fraction(0)), Fraction(0)) for n, v in a.items()}


def mask(values: Usage, names: Iterable[str]) -> Usage:
    keep = set(names)
    return {n: v for n, v in values.items() if n in keep}


def remove_zeros(values: Usage) -> Usage:
    return {n: v for n, v in values.items() if v != 0}


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))
_SMALL = (("m", 10**3), ("u", 10**6), ("n", 10**9))


def _binary_resource(name: str) -> bool:
    return any(word in name for word in ("memory", "storage", "hugepages"))


def format_quantity(value: Fraction, name: str = "") -> str:
    """A canonical quantity string: binary suffixes for whole multiples of 1Ki of a memory or
    storage resource, else decimal ones (1k, 500m)."""
    if value.denominator == 1:
        n = value.numerator
        if n == 0:
            return "0"
        for suffix, mult in _BINARY if _binary_resource(name) else ():
            if n % mult == 0:
                return f"{n // mult}{suffix}"
        for suffix, mult in _DECIMAL:
            if n % mult == 0:
                return f"{n // mult}{suffix}"
        return str(n)
    for suffix, mult in _SMALL:
        scaled = value * mult
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    nanos = -((-value.numerator * 10**9) // value.denominator)
    return f"{nanos}n"


def format_list(values: Usage) -> dict[str, str]:
    return {n: format_quantity(v, n) for n, v in sorted(values.items())}


def pretty(values: Usage) -> str:
    """prettyPrint: `name=value` pairs sorted by name, comma-separated."""
    return ",".join(f"{n}={format_quantity(v, n)}" for n, v in sorted(values.items()))
