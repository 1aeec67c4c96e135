"""The review APIs: create-only kinds answered from the authorizers and the request's user,
never stored (pkg/registry/authorization/*, pkg/registry/authentication/selfsubjectreview).

- SubjectAccessReview: may `spec.user`/`spec.groups` do what `spec.resourceAttributes` or
  `spec.nonResourceAttributes` say (the identity taken as given);
- LocalSubjectAccessReview: the same in one namespace;
- SelfSubjectAccessReview: may the requester (`kubectl auth can-i`);
- SelfSubjectRulesReview: the rules the requester holds in a namespace (`kubectl auth can-i
  --list`);
- SelfSubjectReview: who the requester is (`kubectl auth whoami`), v1 and v1beta1.
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors, kinds
from draplane.api.auth import UserInfo
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.apiserver.authorization import Attributes, Decision, Rules
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.strategies.context import ServerContext


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _strs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _attributes(user: UserInfo, spec: Obj) -> Attributes:
    res = spec.get("resourceAttributes")
    if isinstance(res, dict):
        return Attributes(
            user,
            str(res.get("verb") or ""),
            True,
            str(res.get("group") or ""),
            str(res.get("version") or ""),
            str(res.get("resource") or ""),
            str(res.get("subresource") or ""),
            str(res.get("namespace") or ""),
            str(res.get("name") or ""),
        )
    non = _dict(spec.get("nonResourceAttributes"))
    return Attributes(user, str(non.get("verb") or ""), False, path=str(non.get("path") or ""))


def _spec_errors(spec: Obj, *, subject: bool) -> list[FieldError]:
    causes: list[FieldError] = []
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None and not isinstance(res, dict):
        causes.append(errors.invalid("spec.resourceAttributes", res, "must be an object"))
    if non is not None and not isinstance(non, dict):
        causes.append(errors.invalid("spec.nonResourceAttributes", non, "must be an object"))
    if res is not None and non is not None:
        causes.append(
            errors.invalid(
                "spec.nonResourceAttributes",
                non,
                "cannot be specified in combination with resourceAttributes",
            )
        )
    if res is None and non is None:
        causes.append(
            errors.invalid(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if subject and not spec.get("user") and not spec.get("groups"):
        causes.append(
            errors.invalid(
                "spec.user",
                spec.get("user") or "",
                "at least one of user or group must be specified",
            )
        )
    return causes


def _answer(registry: ServerContext, rt: ResourceType, body: Obj, attrs: Attributes) -> Obj:
    result = registry.authorizer.authorize(attrs)
    status: Obj = {"allowed": result.decision is Decision.ALLOW}
    if result.decision is Decision.DENY:
        status["denied"] = True
    if result.reason:
        status["reason"] = result.reason
    if result.error:
        status["evaluationError"] = result.error
    return _response(rt, body, status)


def _response(rt: ResourceType, body: Obj, status: Obj) -> Obj:
    md = _dict(body.get("metadata"))
    out: Obj = {
        "kind": rt.kind,
        "apiVersion": rt.api_version,
        "metadata": {k: v for k, v in md.items() if k in ("name", "namespace", "generateName")}
        | {"creationTimestamp": None},
        "spec": _dict(body.get("spec")),
        "status": status,
    }
    return out


def _spec(rt: ResourceType, body: Obj, *, subject: bool) -> Obj:
    spec = body.get("spec")
    if not isinstance(spec, dict):
        raise errors.invalid_object(rt.kind, "", [errors.required("spec")], rt)
    causes = _spec_errors(spec, subject=subject)
    if causes:
        raise errors.invalid_object(rt.kind, "", causes, rt)
    return spec


async def subject_access_review(registry: ServerContext, user: UserInfo, req: Request) -> Obj:
    rt = req.rt
    spec = _spec(rt, req.body, subject=True)
    extra = tuple(
        (str(k), _strs(v)) for k, v in _dict(spec.get("extra")).items() if isinstance(k, str)
    )
    subject = UserInfo(
        str(spec.get("user") or ""), str(spec.get("uid") or ""), _strs(spec.get("groups")), extra
    )
    if rt is kinds.LOCAL_SUBJECT_ACCESS_REVIEWS:
        ns = _dict(spec.get("resourceAttributes")).get("namespace")
        if "resourceAttributes" in spec and ns != req.namespace:
            raise errors.invalid_object(
                rt.kind,
                "",
                [
                    errors.invalid(
                        "spec.resourceAttributes.namespace", ns, "must match metadata.namespace"
                    )
                ],
                rt,
            )
        if "nonResourceAttributes" in spec:
            raise errors.invalid_object(
                rt.kind,
                "",
                [
                    errors.invalid(
                        "spec.nonResourceAttributes",
                        spec["nonResourceAttributes"],
                        "disallowed on this kind of request",
                    )
                ],
                rt,
            )
    return _answer(registry, rt, req.body, _attributes(subject, spec))


async def self_subject_access_review(registry: ServerContext, user: UserInfo, req: Request) -> Obj:
    spec = _spec(req.rt, req.body, subject=False)
    return _answer(registry, req.rt, req.body, _attributes(user, spec))


def _rules_status(rules: list[Rules]) -> Obj:
    resource_rules: list[Obj] = []
    non_resource_rules: list[Obj] = []
    incomplete = False
    evaluation_errors: list[str] = []
    for r in rules:
        for rule in r.resource_rules:
            entry: Obj = {
                "verbs": list(rule.verbs),
                "apiGroups": list(rule.api_groups),
                "resources": list(rule.resources),
            }
            if rule.resource_names:
                entry["resourceNames"] = list(rule.resource_names)
            resource_rules.append(entry)
        for nr in r.non_resource_rules:
            non_resource_rules.append(
                {"verbs": list(nr.verbs), "nonResourceURLs": list(nr.non_resource_urls)}
            )
        incomplete = incomplete or r.incomplete
        if r.error:
            evaluation_errors.append(r.error)
    status: Obj = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": incomplete,
    }
    if evaluation_errors:
        status["evaluationError"] = "; ".join(evaluation_errors)
    return status


async def self_subject_rules_review(registry: ServerContext, user: UserInfo, req: Request) -> Obj:
    namespace = _dict(req.body.get("spec")).get("namespace")
    if not namespace or not isinstance(namespace, str):
        raise errors.bad_request("no namespace on request")
    rules = [resolver.rules_for(user, namespace) for resolver in registry.rule_resolvers]
    return _response(req.rt, req.body, _rules_status(rules))


def user_info_status(user: UserInfo) -> Obj:
    info: Obj = {"username": user.name, "groups": list(user.groups)}
    if user.uid:
        info["uid"] = user.uid
    extra = user.extra_dict()
    if extra:
        info["extra"] = {k: list(v) for k, v in extra.items()}
    return info


async def self_subject_review(registry: ServerContext, user: UserInfo, req: Request) -> Obj:
    return _response(req.rt, req.body, {"userInfo": user_info_status(user)})


async def token_review(registry: ServerContext, user: UserInfo, req: Request) -> Obj:
    """TokenReview: who a bearer token authenticates as (status.authenticated, status.user)."""
    spec = _dict(req.body.get("spec"))
    token = spec.get("token")
    if not isinstance(token, str) or not token:
        raise errors.invalid_object(req.rt.kind, "", [errors.required("spec.token")], req.rt)
    status: Obj = {"authenticated": False, "user": {}}
    authenticator = registry.token_authenticator
    if authenticator is not None:
        try:
            found = await authenticator.authenticate(f"Bearer {token}")
        except errors.StatusError:
            status["error"] = "invalid bearer token"
        else:
            status = {"authenticated": True, "user": user_info_status(found)}
    return _response(req.rt, req.body, status)


STRATEGIES = (
    ResourceStrategy(kinds.TOKEN_REVIEWS, create_only=token_review),
    ResourceStrategy(kinds.SUBJECT_ACCESS_REVIEWS, create_only=subject_access_review),
    ResourceStrategy(kinds.LOCAL_SUBJECT_ACCESS_REVIEWS, create_only=subject_access_review),
    ResourceStrategy(
        kinds.SELF_SUBJECT_ACCESS_REVIEWS,
        create_only=self_subject_access_review,
    ),
    ResourceStrategy(
        kinds.SELF_SUBJECT_RULES_REVIEWS,
        create_only=self_subject_rules_review,
    ),
    ResourceStrategy(
        kinds.SELF_SUBJECT_REVIEWS,
        create_only=self_subject_review,
    ),
    ResourceStrategy(
        kinds.SELF_SUBJECT_REVIEWS_V1BETA1,
        create_only=self_subject_review,
    ),
)
