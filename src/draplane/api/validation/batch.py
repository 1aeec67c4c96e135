"""batch/v1 rules: Job and CronJob (pkg/apis/batch/validation/validation.go).

Jobs: the generated selector and its labels, counters, completion modes and their limits,
podFailurePolicy, restartPolicy OnFailure/Never, and on update the immutable selector,
template (scheduling directives stay mutable while a Job is suspended and has not started),
completions (Indexed Jobs may change it together with parallelism), completionMode,
podFailurePolicy, backoffLimitPerIndex and managedBy (1.36; a domain-prefixed path). CronJobs
are in `cronjob`.
"""

from __future__ import annotations

import re
from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation.objectmeta import (
    as_dict,
    as_list,
    immutable,
    semantic_equal,
    shown,
    too_long,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.podtemplate import (
    is_int,
    nonnegative,
    selector_of,
    template_labels,
    template_spec,
    validate_pod_template,
)
from draplane.api.validation.rbac import _label_selector

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
MAX_PARALLELISM_INDEXED = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
_MODES = ["NonIndexed", "Indexed"]
_REPLACEMENT = ["TerminatingOrFailed", "Failed"]
_ACTIONS = ["FailJob", "FailIndex", "Ignore", "Count"]


def _has_label(labels: dict[str, str], key: str, want: str, path: str) -> list[FieldError]:
    """ValidateHasLabel."""
    if key not in labels:
        return [required(f"{path}.labels", f"expected to have label {key}")]
    if labels[key] != want:
        return [invalid(f"{path}.labels", shown(labels), f"must be '{want}'")]
    return []


def _generated_selector(obj: Obj, spec: Obj) -> list[FieldError]:
    if spec.get("manualSelector") is True:
        return []
    template = spec.get("template")
    md = template.get("metadata") if isinstance(template, dict) else None
    if not isinstance(md, dict) or md.get("labels") is None:
        return []
    errs: list[FieldError] = []
    if spec.get("selector") is None:
        errs.append(required("spec.selector", ""))
    uid = obj["metadata"].get("uid") or ""
    name = obj["metadata"].get("name") or ""
    if not uid:
        errs.append(required("metadata.uid", ""))
    labels = template_labels(template)
    p = "spec.template.metadata"
    errs.extend(_has_label(labels, LEGACY_CONTROLLER_UID_LABEL, uid, p))
    errs.extend(_has_label(labels, LEGACY_JOB_NAME_LABEL, name, p))
    errs.extend(_has_label(labels, CONTROLLER_UID_LABEL, uid, p))
    errs.extend(_has_label(labels, JOB_NAME_LABEL, name, p))
    selector = selector_of(spec.get("selector"))
    expected = {CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name}
    if selector is not None and not selector.matches(expected):
        errs.append(
            invalid("spec.selector", shown(spec.get("selector")), "`selector` not auto-generated")
        )
    return errs


def _restart_policy(spec: Obj, path: str) -> list[FieldError]:
    policy = template_spec(spec.get("template")).get("restartPolicy")
    p = f"{path}.template.spec.restartPolicy"
    if policy in (None, "", "Always"):
        return [required(p, 'valid values: "OnFailure", "Never"')]
    if policy not in ("OnFailure", "Never"):
        return [not_supported(p, policy, ["OnFailure", "Never"])]
    if spec.get("podFailurePolicy") is not None and policy != "Never":
        return [invalid(p, policy, 'only "Never" is supported when podFailurePolicy is specified')]
    return []


def _pod_failure_policy(policy: Any, path: str, indexed: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    policy = as_dict(policy, path, errs)
    rules = as_list(policy.get("rules"), f"{path}.rules", errs)
    if len(rules) > 20:
        errs.append(
            FieldError(
                "FieldValueTooMany", f"{path}.rules", "must have at most 20 items", len(rules)
            )
        )
    for i, rule in enumerate(rules):
        p = f"{path}.rules[{i}]"
        rule = as_dict(rule, p, errs)
        action = rule.get("action")
        allowed = _ACTIONS if indexed else [a for a in _ACTIONS if a != "FailIndex"]
        if action not in _ACTIONS:
            errs.append(not_supported(f"{p}.action", action or "", _ACTIONS))
        elif action not in allowed:
            errs.append(
                forbidden(
                    f"{p}.action",
                    "The action: FailIndex is not allowed when backoffLimitPerIndex is not set",
                )
            )
        exit_codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
        if exit_codes is not None and conditions is not None:
            errs.append(
                invalid(
                    p,
                    shown(rule),
                    "specifying both OnExitCodes and OnPodConditions is not supported",
                )
            )
        elif exit_codes is None and conditions is None:
            errs.append(
                invalid(
                    p, shown(rule), "specifying one of OnExitCodes and OnPodConditions is required"
                )
            )
        if isinstance(exit_codes, dict):
            op = exit_codes.get("operator")
            if op not in ("In", "NotIn"):
                errs.append(not_supported(f"{p}.onExitCodes.operator", op or "", ["In", "NotIn"]))
            values = exit_codes.get("values")
            if not isinstance(values, list) or not values:
                errs.append(required(f"{p}.onExitCodes.values", "at least one value is required"))
        for j, cond in enumerate(conditions if isinstance(conditions, list) else []):
            cp = f"{p}.onPodConditions[{j}]"
            cond = as_dict(cond, cp, errs)
            if not cond.get("type"):
                errs.append(required(f"{cp}.type", ""))
            if cond.get("status") not in ("True", "False", "Unknown"):
                errs.append(
                    not_supported(
                        f"{cp}.status", cond.get("status") or "", ["True", "False", "Unknown"]
                    )
                )
    return errs


def job_spec_common(spec: Obj, path: str, schemas: Schemas) -> list[FieldError]:
    """validateJobSpec: what Jobs and CronJob job templates share."""
    errs: list[FieldError] = []
    for field in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ):
        errs.extend(nonnegative(spec.get(field), f"{path}.{field}"))
    mode = spec.get("completionMode")
    indexed = mode == "Indexed"
    if spec.get("backoffLimitPerIndex") is not None:
        errs.extend(nonnegative(spec["backoffLimitPerIndex"], f"{path}.backoffLimitPerIndex"))
        if not indexed:
            errs.append(
                forbidden(f"{path}.backoffLimitPerIndex", "requires indexed completion mode")
            )
    max_failed = spec.get("maxFailedIndexes")
    if max_failed is not None:
        errs.extend(nonnegative(max_failed, f"{path}.maxFailedIndexes"))
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(
                required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified")
            )
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    if mode is not None:
        if mode not in _MODES:
            errs.append(not_supported(f"{path}.completionMode", mode, _MODES))
        if indexed:
            if completions is None:
                errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
            if is_int(parallelism) and parallelism > MAX_PARALLELISM_INDEXED:
                errs.append(
                    invalid(
                        f"{path}.parallelism",
                        parallelism,
                        (
                            f"must be less than or equal to {MAX_PARALLELISM_INDEXED} when "
                            f"completion mode is Indexed"
                        ),
                    )
                )
            if is_int(completions) and is_int(max_failed) and max_failed > completions:
                errs.append(
                    invalid(
                        f"{path}.maxFailedIndexes",
                        max_failed,
                        "must be less than or equal to completions",
                    )
                )
            if (
                is_int(completions)
                and completions > COMPLETIONS_SOFT_LIMIT
                and is_int(parallelism)
                and parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS
            ):
                errs.append(
                    invalid(
                        f"{path}.parallelism",
                        parallelism,
                        f"must be less than or equal to {PARALLELISM_LIMIT_HIGH_COMPLETIONS} "
                        f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with "
                        f"indexed mode",
                    )
                )
    if spec.get("podFailurePolicy") is not None:
        errs.extend(
            _pod_failure_policy(
                spec["podFailurePolicy"],
                f"{path}.podFailurePolicy",
                spec.get("backoffLimitPerIndex") is not None,
            )
        )
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if replacement not in _REPLACEMENT:
            errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, _REPLACEMENT))
        elif spec.get("podFailurePolicy") is not None and replacement != "Failed":
            errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, ["Failed"]))
    if spec.get("managedBy") is not None:  # 1.36: the controller that syncs the Job
        errs.extend(_managed_by(spec["managedBy"], f"{path}.managedBy"))
    errs.extend(validate_pod_template(spec.get("template"), f"{path}.template", schemas))
    errs.extend(_restart_policy(spec, path))
    return errs


_HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(_HTTP_PATH_FMT)


def _managed_by(value: Any, path: str) -> list[FieldError]:
    """apimachinery's IsDomainPrefixedPath and at most 63 bytes."""
    if not isinstance(value, str) or not value:
        return [required(path)]
    host, _, rest = value.partition("/")
    if not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, host, msg) for msg in names.is_dns1123_subdomain(host)]
    if not _HTTP_PATH.fullmatch(rest):
        detail = f"Invalid path (regex used for validation is '{_HTTP_PATH_FMT}')"
        errs.append(invalid(path, rest, detail))
    if len(value.encode()) > 63:
        errs.append(too_long(path, value, 63))
    return errs


def _job_spec(spec: Obj, schemas: Schemas) -> list[FieldError]:
    """ValidateJobSpec: the common rules plus the selector matching the template."""
    errs = job_spec_common(spec, "spec", schemas)
    selector = spec.get("selector")
    if selector is None:
        errs.append(required("spec.selector", ""))
    else:
        errs.extend(_label_selector(selector, "spec.selector"))
    parsed = selector_of(selector)
    if parsed is not None:
        labels = template_labels(spec.get("template"))
        if not parsed.matches(labels):
            errs.append(
                invalid(
                    "spec.template.metadata.labels",
                    shown(labels),
                    "`selector` does not match template `labels`",
                )
            )
    return errs


def validate_job(obj: Obj, schemas: Schemas) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta(md, namespaced=True, name_fn=names.name_is_dns_subdomain)
    spec = as_dict(obj.get("spec"), "spec", errs)
    errs.extend(_generated_selector(obj, spec))
    errs.extend(_job_spec(spec, schemas))
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and is_int(completions) and completions > 0:
        hostname = f"{md.get('name') or ''}-{completions - 1}"
        if names.is_dns1123_label(hostname):
            errs.append(
                invalid(
                    "metadata.name",
                    md.get("name") or "",
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return errs


_SCHEDULING = ("nodeSelector", "tolerations", "schedulingGates")


def _template_for_compare(template: Any, *, scheduling_mutable: bool, new: Any) -> Any:
    if not scheduling_mutable or not isinstance(template, dict):
        return template
    out = dict(template)
    md = dict(out.get("metadata") or {})
    new_md = (new.get("metadata") or {}) if isinstance(new, dict) else {}
    for key in ("labels", "annotations"):
        md[key] = new_md.get(key)
    out["metadata"] = md
    spec = dict(out.get("spec") or {})
    new_spec = template_spec(new)
    for key in _SCHEDULING:
        spec[key] = new_spec.get(key)
    affinity = dict(spec.get("affinity") or {})
    new_affinity = new_spec.get("affinity")
    affinity["nodeAffinity"] = (
        new_affinity.get("nodeAffinity") if isinstance(new_affinity, dict) else None
    )
    spec["affinity"] = affinity
    out["spec"] = spec
    return out


def validate_job_update(obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(
        validate_object_meta(obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain)
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    old_spec = old.get("spec") or {}
    errs.extend(_job_spec(spec, schemas))
    if spec.get("completionMode") == "Indexed":
        changed = spec.get("completions") != old_spec.get("completions")
        if (
            changed
            and spec.get("completions") is not None
            and spec.get("completions") != spec.get("parallelism")
        ):
            errs.append(
                invalid(
                    "spec.completions",
                    spec.get("completions"),
                    "can only be modified in tandem with spec.parallelism",
                )
            )
    else:
        errs.extend(
            immutable("spec.completions", spec.get("completions"), old_spec.get("completions"))
        )
    errs.extend(immutable("spec.selector", spec.get("selector"), old_spec.get("selector")))
    old_status: Obj = old["status"] if isinstance(old.get("status"), dict) else {}
    mutable = old_spec.get("suspend") is True and not old_status.get("startTime")
    old_template = _template_for_compare(
        old_spec.get("template"), scheduling_mutable=mutable, new=spec.get("template")
    )
    if not semantic_equal(spec.get("template"), old_template):
        errs.append(invalid("spec.template", shown(spec.get("template")), "field is immutable"))
    for field in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy"):
        errs.extend(immutable(f"spec.{field}", spec.get(field), old_spec.get(field)))
    return errs


def validate_job_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    status = as_dict(obj.get("status"), "status", errs)
    for field in ("active", "succeeded", "failed", "ready", "terminating"):
        errs.extend(nonnegative(status.get(field), f"status.{field}"))
    return errs
