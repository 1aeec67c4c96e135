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
    f("namespace", "string", "Namespace of the request."),
    f("verb", "string", "Verb: get, list, create, ... or *."),
    f("group", "string", "API group; * is all."),
    f("version", "string", "API version; * is all."),
    f("resource", "string", "Resource; * is all."),
    f("subresource", "string", "Subresource; empty is none."),
    f("name", "string", "Object name; empty is all."),
)
NON_RESOURCE_ATTRIBUTES = struct(
    AUTHZ + "NonResourceAttributes",
    "The non-resource request to check.",
    f("path", "string", "URL path."),
    f("verb", "string", "HTTP verb in lower case."),
)
SAR_SPEC = struct(
    AUTHZ + "SubjectAccessReviewSpec",
    "The request and the user to check it for.",
    f("resourceAttributes", RESOURCE_ATTRIBUTES, "A resource request."),
    f("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, "A non-resource request."),
    f("user", "string", "The user."),
    f("groups", Arr("string"), "The user's groups."),
    f("extra", Map(Arr("string")), "Extra attributes of the user."),
    f("uid", "string", "The user's UID."),
)
SAR_STATUS = struct(
    AUTHZ + "SubjectAccessReviewStatus",
    "The authorizer's decision.",
    f("allowed", "boolean", "The request is allowed.", required=True),
    f("denied", "boolean", "The request is explicitly denied."),
    f("reason", "string", "Why."),
    f("evaluationError", "string", "An error while evaluating, if any."),
)
SELF_SAR_SPEC = struct(
    AUTHZ + "SelfSubjectAccessReviewSpec",
    "The request to check for the requesting user.",
    f("resourceAttributes", RESOURCE_ATTRIBUTES, "A resource request."),
    f("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, "A non-resource request."),
)


def _review(name: str, description: str, spec: str, status: str) -> str:
    return struct(
        name,
        description,
        *type_meta(),
        metadata_field(),
        f("spec", spec, "What to check.", required=True),
        f("status", status, "The answer, filled by the server.", emit=True),
    )


RESOURCE_RULE = struct(
    AUTHZ + "ResourceRule",
    "Verbs allowed on resources.",
    f("verbs", Arr("string"), "Allowed verbs.", required=True),
    f("apiGroups", Arr("string"), "API groups."),
    f("resources", Arr("string"), "Resources."),
    f("resourceNames", Arr("string"), "Object names."),
)
NON_RESOURCE_RULE = struct(
    AUTHZ + "NonResourceRule",
    "Verbs allowed on non-resource URLs.",
    f("verbs", Arr("string"), "Allowed verbs.", required=True),
    f("nonResourceURLs", Arr("string"), "URL paths."),
)
RULES_STATUS = struct(
    AUTHZ + "SubjectRulesReviewStatus",
    "What the user may do in the namespace.",
    f("resourceRules", Arr(RESOURCE_RULE), "Resource rules.", required=True),
    f("nonResourceRules", Arr(NON_RESOURCE_RULE), "Non-resource rules.", required=True),
    f("incomplete", "boolean", "Some rules could not be evaluated.", required=True),
    f("evaluationError", "string", "Why the list is incomplete."),
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
        f("namespace", "string", "The namespace."),
    ),
    RULES_STATUS,
)
USER_INFO = struct(
    AUTHN + "UserInfo",
    "An authenticated user.",
    f("username", "string", "User name."),
    f("uid", "string", "User UID."),
    f("groups", Arr("string"), "Groups of the user."),
    f("extra", Map(Arr("string")), "Extra attributes."),
)
TOKEN_REVIEW = _review(
    AUTHN + "TokenReview",
    "Authenticates a token.",
    struct(
        AUTHN + "TokenReviewSpec",
        "The token to authenticate.",
        f("token", "string", "The token."),
        f("audiences", Arr("string"), "Audiences the token must be valid for."),
    ),
    struct(
        AUTHN + "TokenReviewStatus",
        "The result of authenticating the token.",
        f("authenticated", "boolean", "The token is valid."),
        f("user", USER_INFO, "The user the token stands for.", emit=True),
        f("audiences", Arr("string"), "Audiences the token is valid for."),
        f("error", "string", "Why the token could not be checked."),
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
                f("userInfo", USER_INFO, "The user.", emit=True),
            ),
            "Filled by the server.",
            emit=True,
        ),
    )


BOUND_OBJECT_REFERENCE = struct(
    AUTHN + "BoundObjectReference",
    "The object a token is bound to; the token dies with it.",
    f("kind", "string", "Pod or Secret."),
    f("apiVersion", "string", "API version of the object."),
    f("name", "string", "Name of the object."),
    f("uid", "string", "UID of the object."),
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
            f("audiences", Arr("string"), "Audiences of the token.", required=True),
            f("expirationSeconds", "int64", "Requested lifetime."),
            f("boundObjectRef", BOUND_OBJECT_REFERENCE, "Object the token is bound to."),
        ),
        "The token asked for.",
        required=True,
    ),
    f(
        "status",
        struct(
            AUTHN + "TokenRequestStatus",
            "The issued token.",
            f("token", "string", "The token.", required=True),
            f("expirationTimestamp", "time", "When the token expires.", required=True),
        ),
        "The issued token.",
        emit=True,
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
