"""`RBACAuthorizer`: the RBAC authorizer and rule resolver over an in-memory index of the four
RBAC kinds (plugin/pkg/auth/authorizer/rbac, pkg/registry/rbac/validation/rule.go).

The index follows the store: `load(resource, objects)` once per kind, then `observe(event)` for
every change. Bindings are indexed by subject (User name, Group name, and a ServiceAccount as its
user name `system:serviceaccount:<ns>:<name>`), RoleBindings per namespace, so a request visits
only the bindings naming the user or one of its groups: ClusterRoleBindings, then the
RoleBindings of the request's namespace, each in name order. The first rule that allows wins;
RBAC never denies. Bindings to missing roles are reported in the NoOpinion reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from draplane.api import kinds, meta
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.apiserver.authorization import Attributes, Decision, Result, Rules
from draplane.apiserver.authorization.rules import (
    PolicyRule,
    review_rules,
    rule_allows,
    rules_of,
)
from draplane.storage.interface import Event

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
RESOURCES = (
    kinds.ROLES.key,
    kinds.CLUSTER_ROLES.key,
    kinds.ROLE_BINDINGS.key,
    kinds.CLUSTER_ROLE_BINDINGS.key,
)
"""The storage keys the index follows, for `load`."""

_DECISION_CACHE_SIZE = 16_384

SubjectKey = tuple[str, str]
"""("User", user name) or ("Group", group name); ServiceAccounts are indexed as their user."""


@dataclass(frozen=True, slots=True)
class Binding:
    """A RoleBinding or ClusterRoleBinding as the authorizer reads it."""

    kind: str
    namespace: str
    name: str
    role_kind: str
    role_name: str
    subjects: tuple[Obj, ...]

    @classmethod
    def from_object(cls, kind: str, obj: Obj) -> Binding:
        ref = obj.get("roleRef")
        ref = ref if isinstance(ref, dict) else {}
        subjects = obj.get("subjects")
        return cls(
            kind,
            meta.namespace(obj),
            meta.name(obj),
            str(ref.get("kind") or ""),
            str(ref.get("name") or ""),
            tuple(s for s in subjects if isinstance(s, dict)) if isinstance(subjects, list) else (),
        )

    def subject_user(self, subject: Obj) -> str | None:
        """The user name a ServiceAccount subject stands for (None if it can match no one)."""
        namespace = str(subject.get("namespace") or "") or self.namespace
        if not namespace:
            return None
        return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{subject.get('name') or ''}"

    def subject_keys(self) -> Iterator[SubjectKey]:
        for subject in self.subjects:
            kind, name = subject.get("kind"), str(subject.get("name") or "")
            if kind in ("User", "Group"):
                yield str(kind), name
            elif kind == "ServiceAccount":
                user = self.subject_user(subject)
                if user is not None:
                    yield "User", user

    def first_subject(self, user: UserInfo) -> Obj | None:
        """appliesTo: the first subject that names `user`."""
        for subject in self.subjects:
            kind, name = subject.get("kind"), subject.get("name")
            if (
                (kind == "User" and name == user.name)
                or (kind == "Group" and name in user.groups)
                or (kind == "ServiceAccount" and self.subject_user(subject) == user.name)
            ):
                return subject
        return None

    def describe(self, subject: Obj) -> str:
        """clusterRoleBindingDescriber / roleBindingDescriber."""
        name = str(subject.get("name") or "")
        if subject.get("kind") == "ServiceAccount":
            name = f"{name}/{subject.get('namespace') or self.namespace}"
        who = f'{subject.get("kind")} "{name}"'
        binding = (
            self.name if self.kind == "ClusterRoleBinding" else f"{self.name}/{self.namespace}"
        )
        return f'{self.kind} "{binding}" of {self.role_kind} "{self.role_name}" to {who}'


class _BindingIndex:
    """Bindings by name and by subject key, for one namespace (or the cluster)."""

    def __init__(self) -> None:
        self.by_name: dict[str, Binding] = {}
        self.by_subject: dict[SubjectKey, set[str]] = {}

    def set(self, binding: Binding) -> None:
        self.remove(binding.name)
        self.by_name[binding.name] = binding
        for key in binding.subject_keys():
            self.by_subject.setdefault(key, set()).add(binding.name)

    def remove(self, name: str) -> None:
        old = self.by_name.pop(name, None)
        if old is None:
            return
        for key in old.subject_keys():
            names = self.by_subject.get(key)
            if names is not None:
                names.discard(name)
                if not names:
                    del self.by_subject[key]

    def for_user(self, user: UserInfo) -> list[Binding]:
        names: set[str] = set(self.by_subject.get(("User", user.name), ()))
        for group in user.groups:
            names.update(self.by_subject.get(("Group", group), ()))
        return [self.by_name[n] for n in sorted(names)]


class RBACAuthorizer:
    """Authorizer and RuleResolver over Roles, ClusterRoles and their bindings."""

    def __init__(self) -> None:
        self._roles: dict[tuple[str, str], Obj] = {}
        self._role_rules: dict[tuple[str, str], tuple[PolicyRule, ...]] = {}
        self._cluster_roles: dict[str, Obj] = {}
        self._cluster_role_rules: dict[str, tuple[PolicyRule, ...]] = {}
        self._cluster_bindings = _BindingIndex()
        self._role_bindings: dict[str, _BindingIndex] = {}
        self._decisions: dict[tuple[object, ...], Result] = {}

    # --- following the store ----------------------------------------------------------------

    def load(self, resource: str, objects: Iterable[Obj]) -> None:
        """Add the stored objects of one of `RESOURCES`."""
        for obj in objects:
            self._set(resource, obj)

    def observe(self, event: Event) -> None:
        if event.resource not in RESOURCES:
            return
        if event.type == "DELETED":
            self._remove(event.resource, meta.namespace(event.object), meta.name(event.object))
        else:
            self._set(event.resource, event.object)

    def _set(self, resource: str, obj: Obj) -> None:
        self._decisions.clear()
        namespace, name = meta.namespace(obj), meta.name(obj)
        if resource == kinds.ROLES.key:
            self._roles[namespace, name] = obj
            self._role_rules[namespace, name] = rules_of(obj)
        elif resource == kinds.CLUSTER_ROLES.key:
            self._cluster_roles[name] = obj
            self._cluster_role_rules[name] = rules_of(obj)
        elif resource == kinds.ROLE_BINDINGS.key:
            index = self._role_bindings.setdefault(namespace, _BindingIndex())
            index.set(Binding.from_object("RoleBinding", obj))
        elif resource == kinds.CLUSTER_ROLE_BINDINGS.key:
            self._cluster_bindings.set(Binding.from_object("ClusterRoleBinding", obj))

    def _remove(self, resource: str, namespace: str, name: str) -> None:
        self._decisions.clear()
        if resource == kinds.ROLES.key:
            self._roles.pop((namespace, name), None)
            self._role_rules.pop((namespace, name), None)
        elif resource == kinds.CLUSTER_ROLES.key:
            self._cluster_roles.pop(name, None)
            self._cluster_role_rules.pop(name, None)
        elif resource == kinds.ROLE_BINDINGS.key:
            index = self._role_bindings.get(namespace)
            if index is not None:
                index.remove(name)
                if not index.by_name:
                    del self._role_bindings[namespace]
        elif resource == kinds.CLUSTER_ROLE_BINDINGS.key:
            self._cluster_bindings.remove(name)

    # --- lookups ------------------------------------------------------------------------------

    def get_role(self, kind: str, namespace: str, name: str) -> Obj | None:
        """The indexed Role (`kind` "Role", in `namespace`) or ClusterRole (escalation checks)."""
        if kind == "Role":
            return self._roles.get((namespace, name))
        if kind == "ClusterRole":
            return self._cluster_roles.get(name)
        return None

    def role_reference_rules(
        self, role_kind: str, role_name: str, namespace: str
    ) -> tuple[PolicyRule, ...] | str:
        """GetRoleReferenceRules: the referenced role's rules, or the lookup error's text."""
        if role_kind == "Role":
            rules = self._role_rules.get((namespace, role_name))
            return rules if rules is not None else _not_found("role", role_name)
        if role_kind == "ClusterRole":
            rules = self._cluster_role_rules.get(role_name)
            return rules if rules is not None else _not_found("clusterrole", role_name)
        return f'unsupported role reference kind: "{role_kind}"'

    def visit(
        self, user: UserInfo, namespace: str
    ) -> Iterator[tuple[Binding, Obj, tuple[PolicyRule, ...]] | str]:
        """VisitRulesFor: (binding, subject, rules) for each binding that applies to `user`, or
        the error text of a binding whose role cannot be resolved."""
        groups: list[tuple[_BindingIndex, str]] = [(self._cluster_bindings, "")]
        if namespace and namespace in self._role_bindings:
            groups.append((self._role_bindings[namespace], namespace))
        for index, binding_namespace in groups:
            for binding in index.for_user(user):
                subject = binding.first_subject(user)
                if subject is None:
                    continue
                rules = self.role_reference_rules(
                    binding.role_kind, binding.role_name, binding_namespace
                )
                yield rules if isinstance(rules, str) else (binding, subject, rules)

    # --- Authorizer and RuleResolver ----------------------------------------------------------

    def authorize(self, attrs: Attributes) -> Result:
        """Decisions are remembered until the policy changes (the same request by the same user
        is decided once per policy revision). An ALLOW by a rule without resourceNames holds
        for every name, so it is remembered for the request without its name."""
        a = attrs
        request = (a.user, a.verb, a.resource_request, a.api_group, a.resource, a.subresource)
        general = (*request, a.namespace, a.path, a.field_selector, a.label_selector, "")
        named = (*general[:-1], a.name)
        cached = self._decisions.get(general) or self._decisions.get(named)
        if cached is not None:
            return cached
        if len(self._decisions) >= _DECISION_CACHE_SIZE:
            self._decisions.clear()
        result, for_any_name = self._authorize(attrs)
        self._decisions[general if for_any_name else named] = result
        return result

    def _authorize(self, attrs: Attributes) -> tuple[Result, bool]:
        """The decision, and whether it holds whatever the request's name."""
        errors: list[str] = []
        for item in self.visit(attrs.user, attrs.namespace):
            if isinstance(item, str):
                errors.append(item)
                continue
            binding, subject, rules = item
            for rule in rules:
                if rule_allows(attrs, rule):
                    reason = "RBAC: allowed by " + binding.describe(subject)
                    return Result(Decision.ALLOW, reason), not rule.resource_names
        if errors:
            return Result(Decision.NO_OPINION, "RBAC: " + aggregate(errors)), False
        return Result(Decision.NO_OPINION), False

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        rules: list[PolicyRule] = []
        errors: list[str] = []
        for item in self.visit(user, namespace):
            if isinstance(item, str):
                errors.append(item)
            else:
                rules.extend(item[2])
        resource_rules, non_resource_rules = review_rules(rules)
        return Rules(
            resource_rules,
            non_resource_rules,
            incomplete=bool(errors),
            error=aggregate(errors) if errors else "",
        )


def _not_found(singular: str, name: str) -> str:
    """The lister's NotFound text (`role.rbac.authorization.k8s.io "x" not found`)."""
    return f'{singular}.{kinds.RBAC_GROUP} "{name}" not found'


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate's text: the one message, or `[a, b]`."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
