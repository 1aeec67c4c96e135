"""The review kinds: authorization.k8s.io/v1 access and rules reviews, authentication.k8s.io
TokenReview, SelfSubjectReview (v1 and v1beta1) and TokenRequest."""

from __future__ import annotations

from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct

AUTHZ = "io.k8s.api.authorization.v1."
AUTHN = "io.k8s.api.authentication.v1."

RESOURCE_ATTRIBUTES = struct(
    AUTHZ + "ResourceAttributes",
    "The resource request to check.",
    f("namespace", "string", "Namespace of the request.", tag=1),
    f("verb", "string", "Verb: get, list, create, ... or *.", tag=2),
    f("group", "string", "API group; * is all.", tag=3),
    f("version", "string", "API version; * is all.", tag=4),
    f("resource", "string", "Resource; * is all.", tag=5),
    f("subresource", "string", "Subresource; empty is none.", tag=6),
    f("name", "string", "Object name; empty is all.", tag=7),
)
NON_RESOURCE_ATTRIBUTES = struct(
    AUTHZ + "NonResourceAttributes",
    "The non-resource request to check.",
    f("path", "string", "URL path.", tag=1),
    f("verb", "string", "HTTP verb in lower case.", tag=2),
)
SAR_SPEC = struct(
    AUTHZ + "SubjectAccessReviewSpec",
    "The request and the user to check it for.",
    f("resourceAttributes", RESOURCE_ATTRIBUTES, "A resource request.", tag=1),
    f("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, "A non-resource request.", tag=2),
    f("user", "string", "The user.", tag=3),
    f("groups", Arr("string"), "The user's groups.", tag=4),
    f("extra", Map(Arr("string")), "Extra attributes of the user.", tag=5),
    f("uid", "string", "The user's UID.", tag=6),
)
SAR_STATUS = struct(
    AUTHZ + "SubjectAccessReviewStatus",
    "The authorizer's decision.",
    f("allowed", "boolean", "The request is allowed.", required=True, tag=1),
    f("denied", "boolean", "The request is explicitly denied.", tag=4),
    f("reason", "string", "Why.", tag=2),
    f("evaluationError", "string", "An error while evaluating, if any.", tag=3),
)
SELF_SAR_SPEC = struct(
    AUTHZ + "SelfSubjectAccessReviewSpec",
    "The request to check for the requesting user.",
    f("resourceAttributes", RESOURCE_ATTRIBUTES, "A resource request.", tag=1),
    f("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, "A non-resource request.", tag=2),
)


def _review(name: str, description: str, spec: str, status: str) -> str:
    return struct(
        name,
        description,
        *type_meta(),
        metadata_field(),
        f("spec", spec, "What to check.", required=True, tag=2),
        f("status", status, "The answer, filled by the server.", emit=True, tag=3),
    )


RESOURCE_RULE = struct(
    AUTHZ + "ResourceRule",
    "Verbs allowed on resources.",
    f("verbs", Arr("string"), "Allowed verbs.", required=True, tag=1),
    f("apiGroups", Arr("string"), "API groups.", tag=2),
    f("resources", Arr("string"), "Resources.", tag=3),
    f("resourceNames", Arr("string"), "Object names.", tag=4),
)
NON_RESOURCE_RULE = struct(
    AUTHZ + "NonResourceRule",
    "Verbs allowed on non-resource URLs.",
    f("verbs", Arr("string"), "Allowed verbs.", required=True, tag=1),
    f("nonResourceURLs", Arr("string"), "URL paths.", tag=2),
)
RULES_STATUS = struct(
    AUTHZ + "SubjectRulesReviewStatus",
    "What the user may do in the namespace.",
    f("resourceRules", Arr(RESOURCE_RULE), "Resource rules.", required=True, tag=1),
    f("nonResourceRules", Arr(NON_RESOURCE_RULE), "Non-resource rules.", required=True, tag=2),
    f("incomplete", "boolean", "Some rules could not be evaluated.", required=True, tag=3),
    f("evaluationError", "string", "Why the list is incomplete.", tag=4),
)
SUBJECT_ACCESS_REVIEW = _review(
    AUTHZ + "SubjectAccessReview", "Checks whether a user may do something.", SAR_SPEC, SAR_STATUS
)
SELF_SUBJECT_ACCESS_REVIEW = _review(
    AUTHZ + "SelfSubjectAccessReview",
    "Checks whether the requesting user may do something.",
    SELF_SAR_SPEC,
    SAR_STATUS,
)
LOCAL_SUBJECT_ACCESS_REVIEW = _review(
    AUTHZ + "LocalSubjectAccessReview",
    "Checks whether a user may do something in one namespace.",
    SAR_SPEC,
    SAR_STATUS,
)
SELF_SUBJECT_RULES_REVIEW = _review(
    AUTHZ + "SelfSubjectRulesReview",
    "Lists what the requesting user may do in a namespace.",
    struct(
        AUTHZ + "SelfSubjectRulesReviewSpec",
        "The namespace to list rules for.",
        f("namespace", "string", "The namespace.", tag=1),
    ),
    RULES_STATUS,
)
USER_INFO = struct(
    AUTHN + "UserInfo",
    "An authenticated user.",
    f("username", "string", "User name.", tag=1),
    f("uid", "string", "User UID.", tag=2),
    f("groups", Arr("string"), "Groups of the user.", tag=3),
    f("extra", Map(Arr("string")), "Extra attributes.", tag=4),
)
TOKEN_REVIEW = _review(
    AUTHN + "TokenReview",
    "Authenticates a token.",
    struct(
        AUTHN + "TokenReviewSpec",
        "The token to authenticate.",
        f("token", "string", "The token.", tag=1),
        f("audiences", Arr("string"), "Audiences the token must be valid for.", tag=2),
    ),
    struct(
        AUTHN + "TokenReviewStatus",
        "The result of authenticating the token.",
        f("authenticated", "boolean", "The token is valid.", tag=1),
        f("user", USER_INFO, "The user the token stands for.", emit=True, tag=2),
        f("audiences", Arr("string"), "Audiences the token is valid for.", tag=4),
        f("error", "string", "Why the token could not be checked.", tag=3),
    ),
)


def _self_subject_review(prefix: str) -> str:
    return struct(
        prefix + "SelfSubjectReview",
        "Tells the requesting user who the server thinks they are.",
        *type_meta(),
        metadata_field(),
        f(
            "status",
            struct(
                prefix + "SelfSubjectReviewStatus",
                "The requesting user's attributes.",
                f("userInfo", USER_INFO, "The user.", emit=True, tag=1),
            ),
            "Filled by the server.",
            emit=True,
            tag=2,
        ),
    )


BOUND_OBJECT_REFERENCE = struct(
    AUTHN + "BoundObjectReference",
    "The object a token is bound to; the token dies with it.",
    f("kind", "string", "Pod or Secret.", tag=1),
    f("apiVersion", "string", "API version of the object.", tag=2),
    f("name", "string", "Name of the object.", tag=3),
    f("uid", "string", "UID of the object.", tag=4),
)
TOKEN_REQUEST = struct(
    AUTHN + "TokenRequest",
    "Requests a token for a service account (the serviceaccounts/token subresource).",
    *type_meta(),
    metadata_field(),
    f(
        "spec",
        struct(
            AUTHN + "TokenRequestSpec",
            "The token asked for.",
            f("audiences", Arr("string"), "Audiences of the token.", required=True, tag=1),
            f("expirationSeconds", "int64", "Requested lifetime.", tag=4, pointer=True),
            f("boundObjectRef", BOUND_OBJECT_REFERENCE, "Object the token is bound to.", tag=3),
        ),
        "The token asked for.",
        required=True,
        tag=2,
    ),
    f(
        "status",
        struct(
            AUTHN + "TokenRequestStatus",
            "The issued token.",
            f("token", "string", "The token.", required=True, tag=1),
            f("expirationTimestamp", "time", "When the token expires.", required=True, tag=2),
        ),
        "The issued token.",
        emit=True,
        tag=3,
    ),
)
AUTHZ_GROUP, AUTHN_GROUP = "authorization.k8s.io", "authentication.k8s.io"
serve(AUTHZ_GROUP, "v1", "SubjectAccessReview", SUBJECT_ACCESS_REVIEW, with_list=False)
serve(AUTHZ_GROUP, "v1", "SelfSubjectAccessReview", SELF_SUBJECT_ACCESS_REVIEW, with_list=False)
serve(AUTHZ_GROUP, "v1", "LocalSubjectAccessReview", LOCAL_SUBJECT_ACCESS_REVIEW, with_list=False)
serve(AUTHZ_GROUP, "v1", "SelfSubjectRulesReview", SELF_SUBJECT_RULES_REVIEW, with_list=False)
serve(AUTHN_GROUP, "v1", "TokenReview", TOKEN_REVIEW, with_list=False)
serve(AUTHN_GROUP, "v1", "SelfSubjectReview", _self_subject_review(AUTHN), with_list=False)
serve(
    AUTHN_GROUP,
    "v1beta1",
    "SelfSubjectReview",
    _self_subject_review("io.k8s.api.authentication.v1beta1."),
    with_list=False,
)
serve(AUTHN_GROUP, "v1", "TokenRequest", TOKEN_REQUEST, with_list=False)
