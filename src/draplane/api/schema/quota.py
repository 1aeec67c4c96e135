"""core/v1 ResourceQuota and LimitRange (k8s.io/api/core/v1), with the protobuf field numbers
of core/v1 generated.proto."""

from __future__ import annotations

from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct

CORE = "io.k8s.api.core.v1."

SCOPED_RESOURCE_SELECTOR_REQUIREMENT = struct(
    CORE + "ScopedResourceSelectorRequirement",
    "A selector on a quota scope: the scope name, an operator and values.",
    f("scopeName", "string", "The scope the selector applies to.", required=True, tag=1),
    f("operator", "string", "In, NotIn, Exists or DoesNotExist.", required=True, tag=2),
    f("values", Arr("string"), "The values of In and NotIn.", list_type="atomic", tag=3),
)
SCOPE_SELECTOR = struct(
    CORE + "ScopeSelector",
    "The AND of its scoped-resource selector requirements.",
    f(
        "matchExpressions",
        Arr(SCOPED_RESOURCE_SELECTOR_REQUIREMENT),
        "The requirements, by scope of the resources.",
        list_type="atomic",
        tag=1,
    ),
)
RESOURCE_QUOTA_SPEC = struct(
    CORE + "ResourceQuotaSpec",
    "The hard limits a quota enforces and the scopes of the objects it tracks.",
    f("hard", Map("quantity"), "The hard limit of each named resource.", tag=1),
    f(
        "scopes",
        Arr("string"),
        "Filters every object the quota tracks must match.",
        list_type="atomic",
        tag=2,
    ),
    f("scopeSelector", SCOPE_SELECTOR, "Scope filters with operators and values.", tag=3),
)
RESOURCE_QUOTA_STATUS = struct(
    CORE + "ResourceQuotaStatus",
    "The enforced hard limits and the observed use.",
    f("hard", Map("quantity"), "The hard limits enforced now.", tag=1),
    f("used", Map("quantity"), "The current use of each resource of the namespace.", tag=2),
)
RESOURCE_QUOTA = struct(
    CORE + "ResourceQuota",
    "The aggregate quota restrictions enforced per namespace.",
    *type_meta(),
    metadata_field(),
    f("spec", RESOURCE_QUOTA_SPEC, "The desired quota.", emit=True, tag=2),
    f(
        "status",
        RESOURCE_QUOTA_STATUS,
        "The actual enforced quota and its current usage.",
        emit=True,
        tag=3,
    ),
)

LIMIT_RANGE_ITEM = struct(
    CORE + "LimitRangeItem",
    "Min/max limits and defaults for one kind of object (Pod, Container or PersistentVolumeClaim).",
    f("type", "string", "The kind of object the limits apply to.", required=True, tag=1),
    f("max", Map("quantity"), "The most of each resource allowed.", tag=2),
    f("min", Map("quantity"), "The least of each resource allowed.", tag=3),
    f("default", Map("quantity"), "The default limits when none are given.", tag=4),
    f("defaultRequest", Map("quantity"), "The default requests when none are given.", tag=5),
    f(
        "maxLimitRequestRatio",
        Map("quantity"),
        "The largest limit/request ratio of each resource.",
        tag=6,
    ),
)
LIMIT_RANGE_SPEC = struct(
    CORE + "LimitRangeSpec",
    "The limits enforced.",
    f(
        "limits",
        Arr(LIMIT_RANGE_ITEM),
        "The limits, one item per kind.",
        list_type="atomic",
        required=True,
        tag=1,
    ),
)
LIMIT_RANGE = struct(
    CORE + "LimitRange",
    "Resource consumption limits per kind in a namespace.",
    *type_meta(),
    metadata_field(),
    f("spec", LIMIT_RANGE_SPEC, "The limits enforced.", emit=True, tag=2),
)

serve("", "v1", "ResourceQuota", RESOURCE_QUOTA)
serve("", "v1", "LimitRange", LIMIT_RANGE)
