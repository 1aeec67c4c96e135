"""Protobuf field numbers of the apps, batch, rbac, review and apiextensions schemas: a sample of
numbers, pointers and wire forms matches upstream's generated.proto files (k8s.io/api apps,
batch, rbac, authorization, authentication, autoscaling v1; k8s.io/apiextensions-apiserver
apiextensions/v1). That every field is numbered, and uniquely, is
tests/apiserver/test_protobuf_kinds.py and test_protobuf_field_numbers.py."""

from __future__ import annotations

import pytest

from draplane.api import schema
from draplane.api.schema import model

APPS = "io.k8s.api.apps.v1."
SCALE = "io.k8s.api.autoscaling.v1."
BATCH = "io.k8s.api.batch.v1."
RBAC = "io.k8s.api.rbac.v1."
AUTHZ = "io.k8s.api.authorization.v1."
AUTHN = "io.k8s.api.authentication.v1."
APIEXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."


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
