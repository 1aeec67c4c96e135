"""Authorization: the request attributes authorizers decide on, their decisions, and the union.

An `Authorizer` answers ALLOW, DENY or NO_OPINION for one request's `Attributes`, with a reason.
The API server asks, in order, the privileged-group authorizer (`system:masters`), the Node
authorizer and RBAC; the first ALLOW or DENY wins and NO_OPINION from all of them is a 403 whose
message appends the reasons (kube-apiserver's `union` authorizer). A `RuleResolver` lists the
rules a user holds in a namespace, for SelfSubjectRulesReview.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

from draplane.api.auth import SYSTEM_MASTERS, UserInfo


class Decision(enum.Enum):
    DENY = 0
    ALLOW = 1
    NO_OPINION = 2


@dataclass(frozen=True, slots=True)
class Attributes:
    """What authorizers see of a request (k8s.io/apiserver authorizer.AttributesRecord).

    Resource requests carry `api_group`, `resource`, `subresource`, `namespace` and `name`;
    for list, watch and deletecollection with `fieldSelector=metadata.name=X`, `name` is X.
    Non-resource requests (`/healthz`, `/version`, `/apis`, ...) carry `path`, with the lower-case
    HTTP method as `verb`. Selectors are the raw query strings (AuthorizeWithSelectors).
    """

    user: UserInfo
    verb: str
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""
    field_selector: str = ""
    label_selector: str = ""


@dataclass(frozen=True, slots=True)
class Result:
    decision: Decision
    reason: str = ""
    error: str = ""
    """An evaluation error (RBAC: a binding to a missing role); does not change the decision."""


NO_OPINION = Result(Decision.NO_OPINION)


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> Result: ...


@dataclass(frozen=True, slots=True)
class ResourceRule:
    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NonResourceRule:
    verbs: tuple[str, ...]
    non_resource_urls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rules:
    """What a `RuleResolver` returns (authorizer.RuleResolver.RulesFor)."""

    resource_rules: tuple[ResourceRule, ...] = ()
    non_resource_rules: tuple[NonResourceRule, ...] = ()
    incomplete: bool = False
    error: str = ""


class RuleResolver(Protocol):
    def rules_for(self, user: UserInfo, namespace: str) -> Rules: ...


@dataclass
class Union:
    """The first ALLOW or DENY of `authorizers` wins; reasons of NO_OPINION are collected."""

    authorizers: list[Authorizer] = field(default_factory=list)

    def authorize(self, attrs: Attributes) -> Result:
        reasons: list[str] = []
        errors: list[str] = []
        for authorizer in self.authorizers:
            result = authorizer.authorize(attrs)
            if result.decision is not Decision.NO_OPINION:
                return result
            if result.reason:
                reasons.append(result.reason)
            if result.error:
                errors.append(result.error)
        return Result(Decision.NO_OPINION, "\n".join(reasons), "\n".join(errors))


class SystemMasters:
    """The privileged-group authorizer: members of `system:masters` may do everything."""

    def authorize(self, attrs: Attributes) -> Result:
        if SYSTEM_MASTERS in attrs.user.groups:
            return Result(Decision.ALLOW)
        return NO_OPINION


class AlwaysAllow:
    """Every request allowed (kube-apiserver's `--authorization-mode=AlwaysAllow`)."""

    def authorize(self, attrs: Attributes) -> Result:
        return Result(Decision.ALLOW)
