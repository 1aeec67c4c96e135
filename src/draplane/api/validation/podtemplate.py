"""Rules the workload kinds share (pkg/apis/apps/validation, pkg/apis/core/validation).

`validate_pod_template` is ValidatePodTemplateSpec: template labels and annotations, then the pod
spec through the pod rules (`draplane.api.validation.pod`, resource claims included) with the
template's field paths; `template_for_replicas` adds the ReplicaSet-style checks (the selector
must match the template labels, restartPolicy Always, no activeDeadlineSeconds). Also the
int-or-percent fields of rolling updates, non-negative integers and label selectors.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeGuard

from draplane.api import errors
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.selectors import LabelSelector
from draplane.api.validation.objectmeta import (
    as_dict,
    shown,
    validate_annotations,
    validate_labels,
)
from draplane.api.validation.pod import validate_pod_spec
from draplane.api.validation.rbac import _label_selector

MAX_INT32 = 2**31 - 1
_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MESSAGE = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def nonnegative(value: Any, path: str) -> list[FieldError]:
    """ValidateNonnegativeField (absent values are not checked)."""
    if is_int(value) and value < 0:
        return [invalid(path, value, "must be greater than or equal to 0")]
    return []


def _reprefix(err: FieldError, prefix: str) -> FieldError:
    """`spec.containers[0]` of a pod becomes `<prefix>.spec.containers[0]` of a template."""
    return dataclasses.replace(err, field=f"{prefix}.{err.field}")


def validate_pod_template(template: Any, path: str, schemas: Schemas) -> list[FieldError]:
    """ValidatePodTemplateSpec at `path` (`spec.template`), the pod spec as `schemas` type it."""
    errs: list[FieldError] = []
    template = as_dict(template, path, errs)
    md = as_dict(template.get("metadata"), f"{path}.metadata", errs)
    if "labels" in md:
        errs.extend(validate_labels(md["labels"], f"{path}.metadata.labels"))
    if "annotations" in md:
        errs.extend(validate_annotations(md["annotations"], f"{path}.metadata.annotations"))
    spec = as_dict(template.get("spec"), f"{path}.spec", errs)
    errs.extend(_reprefix(e, path) for e in validate_pod_spec(spec, schemas))
    if spec.get("ephemeralContainers"):
        errs.append(
            forbidden(
                f"{path}.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


def template_labels(template: Any) -> dict[str, str]:
    md = template.get("metadata") if isinstance(template, dict) else None
    labels = md.get("labels") if isinstance(md, dict) else None
    return labels if isinstance(labels, dict) else {}


def template_spec(template: Any) -> Obj:
    spec = template.get("spec") if isinstance(template, dict) else None
    return spec if isinstance(spec, dict) else {}


def selector_of(selector: Any) -> LabelSelector | None:
    """metav1.LabelSelectorAsSelector, or None when it does not convert."""
    try:
        return LabelSelector.from_label_selector(selector)
    except errors.StatusError:
        return None


def selector_matches_template(selector: Any, template: Any, path: str) -> list[FieldError]:
    """The selector (when it converts and is not empty) must match the template labels."""
    parsed = selector_of(selector)
    if parsed is None or parsed.empty():
        return []
    labels = template_labels(template)
    if parsed.matches(labels):
        return []
    return [
        invalid(
            f"{path}.metadata.labels", shown(labels), "`selector` does not match template `labels`"
        )
    ]


def validate_selector(selector: Any, path: str, kind: str) -> list[FieldError]:
    """Required, a valid LabelSelector, and not empty ("empty selector is invalid for <kind>")."""
    if selector is None:
        return [required(path, "")]
    errs = _label_selector(selector, path)
    if (
        not errs
        and isinstance(selector, dict)
        and not selector.get("matchLabels")
        and not selector.get("matchExpressions")
    ):
        errs.append(invalid(path, shown(selector), f"empty selector is invalid for {kind}"))
    return errs


def restart_always(template: Any, path: str) -> list[FieldError]:
    policy = template_spec(template).get("restartPolicy")
    if policy != "Always":
        return [not_supported(f"{path}.spec.restartPolicy", policy or "", ["Always"])]
    return []


def template_for_replicas(
    selector: Any, template: Any, path: str, schemas: Schemas
) -> list[FieldError]:
    """ValidatePodTemplateSpecForReplicaSet (Deployments and ReplicaSets)."""
    if template is None:
        return [required(path, "")]
    errs = selector_matches_template(selector, template, path)
    errs.extend(validate_pod_template(template, path, schemas))
    errs.extend(restart_always(template, path))
    if template_spec(template).get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                f"{path}.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            )
        )
    return errs


def int_or_percent_value(value: Any) -> int:
    """getIntOrPercentValue: the number of an int or of a percent string (else 0)."""
    if is_int(value):
        return int(value)
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return 0


def positive_int_or_percent(value: Any, path: str) -> list[FieldError]:
    """ValidatePositiveIntOrPercent (absent: nothing to check)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [] if _PERCENT.match(value) else [invalid(path, value, _PERCENT_MESSAGE)]
    if is_int(value):
        return nonnegative(value, path)
    return [invalid(path, shown(value), "must be an integer or percentage (e.g '5%')")]


def not_more_than_100_percent(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, str) and _PERCENT.match(value) and int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def format_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: requirements sorted by key; "<none>" when empty."""
    parsed = selector_of(selector)
    if parsed is None:
        return "<error>"
    reqs = sorted(
        (
            dataclasses.replace(r, values=tuple(sorted(r.values)))
            if r.operator in ("in", "notin")
            else r
            for r in parsed.requirements
        ),
        key=lambda r: r.key,
    )
    text = str(LabelSelector(tuple(reqs)))
    return text or "<none>"
