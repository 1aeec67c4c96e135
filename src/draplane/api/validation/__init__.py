"""Defaulting and validation per kind, as the API server's registry runs them.

`default` fills in what Kubernetes defaults; `validate_create`, `validate_update` and
`validate_status_update` return FieldErrors with Kubernetes' field paths (empty = valid). None of
them raises on malformed input: each first checks every field's JSON type (`fieldtypes`, the
decoding step of kube-apiserver) and reports only those errors when there are any, so the rules
per kind read well-typed fields.
"""

from __future__ import annotations

from collections.abc import Callable

from draplane.api import errors, kinds
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.validation import (
    apiextensions,
    apps,
    batch,
    claimstatus,
    core,
    cronjob,
    network,
    pod,
    podstatus,
    rbac,
    resource,
    statefulset,
)
from draplane.api.validation.defaults import default
from draplane.api.validation.fieldtypes import decode_fields, normalize, type_errors
from draplane.api.validation.objectmeta import type_invalid

__all__ = [
    "create_rules",
    "default",
    "normalize",
    "require_field_types",
    "status_rules",
    "type_errors",
    "update_rules",
    "validate_create",
    "validate_status_update",
    "validate_update",
]


CreateFn = Callable[[Obj], list[FieldError]]
UpdateFn = Callable[[Obj, Obj], list[FieldError]]

_CREATE: dict[ResourceType, CreateFn] = {
    kinds.PODS: pod.validate_pod_create,
    kinds.NODES: core.validate_node,
    kinds.NAMESPACES: core.validate_namespace,
    kinds.EVENTS: core.validate_event,
    kinds.CONFIGMAPS: core.validate_config_map,
    kinds.LEASES: core.validate_lease,
    kinds.RESOURCE_CLAIMS: resource.validate_claim,
    kinds.RESOURCE_CLAIM_TEMPLATES: resource.validate_claim_template,
    kinds.RESOURCE_CLASSES: resource.validate_class,
    kinds.POD_SCHEDULING_CONTEXTS: resource.validate_scheduling_context,
    kinds.ROLES: rbac.validate_role,
    kinds.CLUSTER_ROLES: rbac.validate_cluster_role,
    kinds.ROLE_BINDINGS: rbac.validate_role_binding,
    kinds.CLUSTER_ROLE_BINDINGS: rbac.validate_cluster_role_binding,
    kinds.DEPLOYMENTS: apps.validate_deployment,
    kinds.REPLICA_SETS: apps.validate_replica_set,
    kinds.STATEFUL_SETS: statefulset.validate_stateful_set,
    kinds.DAEMON_SETS: statefulset.validate_daemon_set,
    kinds.CONTROLLER_REVISIONS: statefulset.validate_controller_revision,
    kinds.JOBS: batch.validate_job,
    kinds.CRON_JOBS: cronjob.validate_cron_job,
    kinds.SECRETS: network.validate_secret,
    kinds.SERVICES: network.validate_service,
    kinds.ENDPOINTS: network.validate_endpoints,
    kinds.ENDPOINT_SLICES: network.validate_endpoint_slice,
    kinds.CUSTOM_RESOURCE_DEFINITIONS: apiextensions.validate_crd,
}
_UPDATE: dict[ResourceType, UpdateFn] = {
    kinds.PODS: pod.validate_pod_update,
    kinds.NODES: core.validate_node_update,
    kinds.NAMESPACES: core.validate_namespace_update,
    kinds.EVENTS: core.validate_event_update,
    kinds.CONFIGMAPS: core.validate_config_map_update,
    kinds.LEASES: core.validate_lease_update,
    kinds.RESOURCE_CLAIMS: resource.validate_claim_update,
    kinds.RESOURCE_CLAIM_TEMPLATES: resource.validate_claim_template_update,
    kinds.RESOURCE_CLASSES: resource.validate_class_update,
    kinds.POD_SCHEDULING_CONTEXTS: resource.validate_scheduling_context_update,
    kinds.ROLES: rbac.validate_role_update,
    kinds.CLUSTER_ROLES: rbac.validate_cluster_role_update,
    kinds.ROLE_BINDINGS: rbac.validate_role_binding_update,
    kinds.CLUSTER_ROLE_BINDINGS: rbac.validate_cluster_role_binding_update,
    kinds.DEPLOYMENTS: apps.validate_deployment_update,
    kinds.REPLICA_SETS: apps.validate_replica_set_update,
    kinds.STATEFUL_SETS: statefulset.validate_stateful_set_update,
    kinds.DAEMON_SETS: statefulset.validate_daemon_set_update,
    kinds.CONTROLLER_REVISIONS: statefulset.validate_controller_revision_update,
    kinds.JOBS: batch.validate_job_update,
    kinds.CRON_JOBS: cronjob.validate_cron_job_update,
    kinds.SECRETS: network.validate_secret_update,
    kinds.SERVICES: network.validate_service_update,
    kinds.ENDPOINTS: network.validate_endpoints_update,
    kinds.ENDPOINT_SLICES: network.validate_endpoint_slice_update,
    kinds.CUSTOM_RESOURCE_DEFINITIONS: apiextensions.validate_crd_update,
}
_STATUS: dict[ResourceType, UpdateFn] = {
    kinds.PODS: podstatus.validate_pod_status_update,
    kinds.NODES: core.validate_node_status_update,
    kinds.NAMESPACES: core.validate_namespace_status_update,
    kinds.RESOURCE_CLAIMS: claimstatus.validate_claim_status_update,
    kinds.POD_SCHEDULING_CONTEXTS: resource.validate_scheduling_context_status_update,
    kinds.DEPLOYMENTS: apps.validate_deployment_status_update,
    kinds.REPLICA_SETS: apps.validate_replica_set_status_update,
    kinds.STATEFUL_SETS: statefulset.validate_stateful_set_status_update,
    kinds.DAEMON_SETS: statefulset.validate_daemon_set_status_update,
    kinds.JOBS: batch.validate_job_status_update,
    kinds.CRON_JOBS: cronjob.validate_cron_job_status_update,
    kinds.SERVICES: network.validate_service_status_update,
    kinds.CUSTOM_RESOURCE_DEFINITIONS: apiextensions.validate_crd_status_update,
}


def _shape_errors(rt: ResourceType, obj: Obj) -> list[FieldError]:
    if not isinstance(obj, dict):
        return [type_invalid("", obj, "must be an object")]
    if not isinstance(obj.get("metadata"), dict):
        return [type_invalid("metadata", obj.get("metadata"), "must be an object")]
    return type_errors(rt, obj)


def require_field_types(
    rt: ResourceType,
    obj: Obj,
    *,
    mode: str = "",
    duplicates: tuple[str, ...] = (),
    prune: bool = True,
) -> None:
    """The decoding step of a write, where kube-apiserver decodes the body, before defaulting
    and the strategies read it: unknown and duplicate fields per `fieldValidation` `mode`
    (400 under Strict, dropped otherwise), then 422 Invalid when a field has the wrong JSON
    type (`fieldtypes`)."""
    causes = decode_fields(rt, obj, mode=mode, duplicates=duplicates, prune=prune)
    if causes:
        md = obj.get("metadata") if isinstance(obj, dict) else None
        name = md.get("name") if isinstance(md, dict) else None
        raise errors.invalid_object(rt.kind, name if isinstance(name, str) else "", causes, rt)


def create_rules(rt: ResourceType, obj: Obj) -> list[FieldError]:
    """The kind's create validation of an object whose field types were already checked."""
    fn = _CREATE.get(rt)
    return fn(obj) if fn is not None else core.validate_generic(rt, obj)


def update_rules(rt: ResourceType, obj: Obj, old: Obj) -> list[FieldError]:
    """The kind's main-resource update validation (field types already checked)."""
    fn = _UPDATE.get(rt)
    return fn(obj, old) if fn is not None else core.validate_generic_update(rt, obj, old)


def status_rules(rt: ResourceType, obj: Obj, old: Obj) -> list[FieldError]:
    """The kind's `status` update validation (field types already checked)."""
    fn = _STATUS.get(rt)
    return fn(obj, old) if fn is not None else core.validate_generic_status_update(obj, old)


def validate_create(rt: ResourceType, obj: Obj) -> list[FieldError]:
    return _shape_errors(rt, obj) or create_rules(rt, obj)


def validate_update(rt: ResourceType, obj: Obj, old: Obj) -> list[FieldError]:
    return _shape_errors(rt, obj) or update_rules(rt, obj, old)


def validate_status_update(rt: ResourceType, obj: Obj, old: Obj) -> list[FieldError]:
    return _shape_errors(rt, obj) or status_rules(rt, obj, old)
