"""core/v1 ReplicationController rules (pkg/apis/core/validation ValidateReplicationController*):
a non-empty map selector matching the template's labels, non-negative replicas and
minReadySeconds, a pod template that restarts Always and sets no activeDeadlineSeconds. Unlike
a ReplicaSet's, the selector may change. `status` updates follow the ReplicaSet rules (counts not
negative, none above `replicas`, available at most ready)."""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, required
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation.apps import nonnegative_fields, validate_replica_set_status_update
from draplane.api.validation.objectmeta import (
    as_dict,
    shown,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.podtemplate import (
    restart_always,
    template_labels,
    template_spec,
    validate_pod_template,
)

validate_replication_controller_status_update = validate_replica_set_status_update


def _template(selector: Any, template: Any, schemas: Schemas) -> list[FieldError]:
    """ValidatePodTemplateSpecForRC."""
    path = "spec.template"
    if template is None:
        return [required(path, "")]
    errs: list[FieldError] = []
    labels = template_labels(template)
    if (
        isinstance(selector, dict)
        and selector
        and any(labels.get(k) != v for k, v in selector.items())
    ):
        errs.append(
            invalid(
                f"{path}.metadata.labels",
                shown(labels),
                "`selector` does not match template `labels`",
            )
        )
    errs.extend(validate_pod_template(template, path, schemas))
    errs.extend(restart_always(template, path))
    if template_spec(template).get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                f"{path}.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in ReplicationController is not Supported",
            )
        )
    return errs


def _spec(obj: Obj, errs: list[FieldError], schemas: Schemas) -> None:
    spec = as_dict(obj.get("spec"), "spec", errs)
    errs.extend(nonnegative_fields(spec, "spec", "minReadySeconds"))
    selector = spec.get("selector")
    if not selector:
        errs.append(required("spec.selector", ""))
    else:
        errs.extend(validate_labels(selector, "spec.selector"))
    errs.extend(nonnegative_fields(spec, "spec", "replicas"))
    errs.extend(_template(selector, spec.get("template"), schemas))


def validate_replication_controller(obj: Obj, schemas: Schemas) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    _spec(obj, errs, schemas)
    return errs


def validate_replication_controller_update(
    obj: Obj, old: Obj, schemas: Schemas
) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    _spec(obj, errs, schemas)
    return errs
