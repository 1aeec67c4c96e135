"""Protobuf field numbers of the apps, batch, rbac, review and apiextensions schemas: every field
of every struct these kinds reach (in each served Kubernetes version) has its generated.proto
number, unique within its message, and a sample of numbers, pointers and wire forms matches
upstream's generated.proto files (k8s.io/api apps, batch, rbac, authorization, authentication,
autoscaling v1; k8s.io/apiextensions-apiserver apiextensions/v1)."""

from __future__ import annotations

from collections import Counter

import pytest

from draplane.api import schema, versions
from draplane.api.schema import model
from draplane.api.schema.meta import list_metadata_field, metadata_field, type_meta

APPS = "io.k8s.api.apps.v1."
SCALE = "io.k8s.api.autoscaling.v1."
BATCH = "io.k8s.api.batch.v1."
RBAC = "io.k8s.api.rbac.v1."
AUTHZ = "io.k8s.api.authorization.v1."
AUTHN = "io.k8s.api.authentication.v1."
APIEXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
OWNED = (APPS, SCALE, BATCH, RBAC, AUTHZ, AUTHN, "io.k8s.api.authentication.v1beta1.", APIEXT)
"""The struct name prefixes of apps.py, batch.py, rbac.py, reviews.py and apiextensions.py."""

GROUPS = {
    "apps",
    "batch",
    "rbac.authorization.k8s.io",
    "authorization.k8s.io",
    "authentication.k8s.io",
    "apiextensions.k8s.io",
}
SUBRESOURCES = [("autoscaling", "v1", "Scale"), ("authentication.k8s.io", "v1", "TokenRequest")]
"""Kinds served only as subresources (not in a mode's `served`)."""

UNNUMBERED = {*type_meta(), metadata_field()}
"""TypeMeta is inlined into no protobuf message; metadata_field()'s number is meta.py's."""


def _leaf(t: model.Type) -> model.Type:
    while isinstance(t, model.Arr | model.Map):
        t = t.item if isinstance(t, model.Arr) else t.value
    return t


def _is_served_list(struct: model.Struct) -> bool:
    """A <Kind>List built by meta.serve (its numbers are meta.py's)."""
    names = [fld.name for fld in struct.fields]
    return names == ["apiVersion", "kind", "metadata", "items"] and (
        struct.fields[2] == list_metadata_field()
    )


def _reached(schemas: model.Schemas) -> dict[str, model.Struct]:
    """The structs of the owned files reachable from the kinds of GROUPS and SUBRESOURCES,
    following field types and the struct a `wire` names (openAPIV3Schema's JSONSchemaProps)."""
    mode = versions.MODES[schemas.version]
    roots = [schema.for_resource(schemas, rt) for rt in mode.served if rt.group in GROUPS]
    assert schema.GENERIC not in roots
    for gvk in SUBRESOURCES:
        found = schemas.kind_struct(*gvk)
        assert found is not None, gvk
        roots.append(found)
    seen: dict[str, model.Struct] = {}
    pending = [r.name for r in roots]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        struct = seen[name] = schemas.get(name)
        for fld in struct.fields:
            for t in (_leaf(fld.type), fld.wire):
                if isinstance(t, str) and model.is_struct(t):
                    pending.append(t)
    return {
        n: s for n, s in seen.items() if n.startswith(OWNED) and not _is_served_list(schemas.get(n))
    }


@pytest.mark.parametrize("mode", list(versions.MODES))
def test_every_reached_field_is_numbered_once(mode: str) -> None:
    reached = _reached(schema.schemas_for(mode))
    unnumbered = [
        f"{name}.{fld.name}"
        for name, struct in reached.items()
        for fld in struct.fields
        if fld.tag == 0 and fld not in UNNUMBERED
    ]
    duplicated = [
        f"{name}: field {tag} (embedded {embedded}) {count} times"
        for name, struct in reached.items()
        for (embedded, tag), count in Counter(
            (fld.embedded, fld.tag) for fld in struct.fields if fld.tag
        ).items()
        if count > 1
    ]
    assert (unnumbered, duplicated) == ([], [])
    for expected in (
        APPS + "StatefulSetOrdinals",
        SCALE + "ScaleStatus",
        BATCH + "PodFailurePolicyOnExitCodesRequirement",
        RBAC + "RoleRef",
        AUTHZ + "SubjectRulesReviewStatus",
        AUTHN + "TokenRequestSpec",
        APIEXT + "JSONSchemaProps",
        APIEXT + "ValidationRule",
    ):
        assert expected in reached


def _field(prefix: str, message: str, name: str) -> model.Field:
    return schema.schemas_for().get(prefix + message).by_name[name]


@pytest.mark.parametrize(
    ("prefix", "message", "name", "tag"),
    [
        pytest.param(prefix, message, name, tag, id=f"{message}.{name}")
        for prefix, message, name, tag in [
            (APPS, "Deployment", "spec", 2),
            (APPS, "DeploymentSpec", "strategy", 4),
            (APPS, "DeploymentSpec", "progressDeadlineSeconds", 9),
            (APPS, "DeploymentStatus", "readyReplicas", 7),
            (APPS, "DeploymentStatus", "collisionCount", 8),
            (APPS, "DeploymentCondition", "lastUpdateTime", 6),
            (APPS, "DeploymentCondition", "lastTransitionTime", 7),
            (APPS, "ReplicaSetSpec", "minReadySeconds", 4),
            (APPS, "ReplicaSetStatus", "observedGeneration", 3),
            (APPS, "StatefulSetSpec", "serviceName", 5),
            (APPS, "StatefulSetSpec", "ordinals", 11),
            (APPS, "StatefulSetStatus", "availableReplicas", 11),
            (APPS, "DaemonSetSpec", "revisionHistoryLimit", 6),
            (APPS, "DaemonSetStatus", "conditions", 10),
            (APPS, "ControllerRevision", "revision", 3),
            (SCALE, "ScaleStatus", "selector", 2),
            (BATCH, "JobSpec", "podFailurePolicy", 11),
            (BATCH, "JobSpec", "backoffLimit", 7),
            (BATCH, "JobSpec", "maxFailedIndexes", 13),
            (BATCH, "JobSpec", "podReplacementPolicy", 14),
            (BATCH, "JobStatus", "terminating", 11),
            (BATCH, "JobStatus", "failedIndexes", 10),
            (BATCH, "CronJobSpec", "timeZone", 8),
            (BATCH, "CronJobStatus", "lastSuccessfulTime", 5),
            (BATCH, "PodFailurePolicyOnExitCodesRequirement", "values", 3),
            (RBAC, "PolicyRule", "verbs", 1),
            (RBAC, "PolicyRule", "nonResourceURLs", 5),
            (RBAC, "ClusterRole", "aggregationRule", 3),
            (RBAC, "RoleBinding", "roleRef", 3),
            (RBAC, "Subject", "namespace", 4),
            (AUTHZ, "SubjectAccessReviewSpec", "extra", 5),
            (AUTHZ, "SubjectAccessReviewStatus", "denied", 4),
            (AUTHZ, "ResourceAttributes", "name", 7),
            (AUTHZ, "SubjectRulesReviewStatus", "evaluationError", 4),
            (AUTHN, "TokenReviewStatus", "audiences", 4),
            (AUTHN, "TokenRequestSpec", "expirationSeconds", 4),
            (AUTHN, "SelfSubjectReview", "status", 2),
            (AUTHN, "BoundObjectReference", "uid", 4),
            (APIEXT, "CustomResourceDefinitionSpec", "versions", 7),
            (APIEXT, "CustomResourceDefinitionSpec", "conversion", 9),
            (APIEXT, "CustomResourceDefinitionVersion", "selectableFields", 9),
            (APIEXT, "WebhookClientConfig", "url", 3),
            (APIEXT, "WebhookConversion", "conversionReviewVersions", 3),
            (APIEXT, "JSONSchemaProps", "x-kubernetes-validations", 44),
            (APIEXT, "JSONSchemaProps", "additionalProperties", 30),
            (APIEXT, "ValidationRule", "optionalOldSelf", 6),
        ]
    ],
)
def test_field_number_matches_upstream(prefix: str, message: str, name: str, tag: int) -> None:
    assert _field(prefix, message, name).tag == tag


@pytest.mark.parametrize(
    ("prefix", "message", "name", "pointer", "wire"),
    [
        pytest.param(prefix, message, name, pointer, wire, id=f"{message}.{name}")
        for prefix, message, name, pointer, wire in [
            (APPS, "DeploymentSpec", "replicas", True, ""),
            (APPS, "DeploymentSpec", "minReadySeconds", False, ""),
            (APPS, "RollingUpdateDeployment", "maxSurge", True, ""),
            (APPS, "StatefulSetOrdinals", "start", False, ""),
            (APPS, "ControllerRevision", "data", False, "raw"),
            (BATCH, "JobSpec", "suspend", True, ""),
            (BATCH, "JobStatus", "active", False, ""),
            (BATCH, "CronJobSpec", "startingDeadlineSeconds", True, ""),
            (AUTHN, "TokenRequestSpec", "expirationSeconds", True, ""),
            (
                APIEXT,
                "CustomResourceValidation",
                "openAPIV3Schema",
                False,
                APIEXT + "JSONSchemaProps",
            ),
            (APIEXT, "JSONSchemaProps", "default", False, "raw"),
            (APIEXT, "JSONSchemaProps", "enum", False, "raw"),
            (APIEXT, "JSONSchemaProps", "items", False, "schemaorarray"),
            (APIEXT, "JSONSchemaProps", "dependencies", False, "schemaorstringarray"),
            (APIEXT, "JSONSchemaProps", "maxLength", True, ""),
            (APIEXT, "ServiceReference", "port", True, ""),
        ]
    ],
)
def test_pointer_and_wire_match_upstream(
    prefix: str, message: str, name: str, pointer: bool, wire: str
) -> None:
    fld = _field(prefix, message, name)
    assert (fld.pointer, fld.wire) == (pointer, wire)
