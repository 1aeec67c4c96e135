"""batch/v1 CronJob rules (pkg/apis/batch/validation/validation.go): the schedule
(`draplane.api.cron`), timeZone, concurrencyPolicy, the 52-character name limit and the job
template (the Job spec rules, without a selector).
"""

from __future__ import annotations

import re
from typing import Any

from draplane.api import cron, names
from draplane.api.errors import FieldError, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation.batch import job_spec_common
from draplane.api.validation.objectmeta import (
    as_dict,
    shown,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.podtemplate import nonnegative

_CONCURRENCY = ["Allow", "Forbid", "Replace"]
_TZ_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")


def validate_schedule(
    schedule: Any, time_zone: Any, path: str, *, allow_tz: bool
) -> list[FieldError]:
    if not schedule:
        return [required(path, "")]
    if not isinstance(schedule, str):
        return [invalid(path, shown(schedule), "must be a string")]
    errs: list[FieldError] = []
    try:
        cron.parse_schedule(schedule)
    except cron.CronError as err:
        errs.append(invalid(path, schedule, str(err)))
    if time_zone is not None and "TZ" in schedule:
        errs.append(
            invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule")
        )
    elif not allow_tz and "TZ" in schedule:
        errs.append(
            invalid(
                path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
            )
        )
    return errs


def validate_time_zone(zone: Any, path: str) -> list[FieldError]:
    if zone is None:
        return []
    if not isinstance(zone, str) or not zone:
        return [invalid(path, zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.match(part):
            return [invalid(path, zone, f"unknown time zone {zone}")]
    if zone.lower() == "local":
        return [
            invalid(
                path,
                zone,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        ]
    try:
        cron.load_zone(zone)
    except cron.CronError as err:
        return [invalid(path, zone, str(err))]
    return []


def _job_template(template: Any, path: str, schemas: Schemas) -> list[FieldError]:
    errs: list[FieldError] = []
    template = as_dict(template, path, errs)
    spec = as_dict(template.get("spec"), f"{path}.spec", errs)
    errs.extend(job_spec_common(spec, f"{path}.spec", schemas))
    if spec.get("selector") is not None:
        errs.append(
            invalid(
                f"{path}.spec.selector",
                shown(spec["selector"]),
                "`selector` will be auto-generated",
            )
        )
    if spec.get("manualSelector") is True:
        errs.append(not_supported(f"{path}.spec.manualSelector", True, ["nil", "false"]))
    return errs


def _cron_job_spec(spec: Obj, old_spec: Obj | None, schemas: Schemas) -> list[FieldError]:
    allow_tz = old_spec is not None and "TZ" in str(old_spec.get("schedule") or "")
    errs = validate_schedule(
        spec.get("schedule"), spec.get("timeZone"), "spec.schedule", allow_tz=allow_tz
    )
    errs.extend(nonnegative(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds"))
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        errs.extend(validate_time_zone(spec.get("timeZone"), "spec.timeZone"))
    policy = spec.get("concurrencyPolicy")
    if not policy:
        errs.append(required("spec.concurrencyPolicy", ""))
    elif policy not in _CONCURRENCY:
        errs.append(not_supported("spec.concurrencyPolicy", policy, _CONCURRENCY))
    errs.extend(_job_template(spec.get("jobTemplate"), "spec.jobTemplate", schemas))
    for field in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs.extend(nonnegative(spec.get(field), f"spec.{field}"))
    return errs


def validate_cron_job(obj: Obj, schemas: Schemas) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta(md, namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs.extend(_cron_job_spec(as_dict(obj.get("spec"), "spec", errs), None, schemas))
    name = md.get("name")
    if isinstance(name, str) and len(name) > 52:
        errs.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    return errs


def validate_cron_job_update(obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(
        validate_object_meta(obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain)
    )
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    errs.extend(_cron_job_spec(as_dict(obj.get("spec"), "spec", errs), old_spec, schemas))
    return errs


def validate_cron_job_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    return errs
