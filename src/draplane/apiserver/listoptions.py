"""ListOptions: validation of `resourceVersion`, `resourceVersionMatch`, `continue` and `limit`,
and which state a GET or LIST reads, as kube-apiserver 1.28 decides it (watch cache or etcd).

A LIST reads the current state, or a consistent snapshot (`resourceVersionMatch=Exact`; a
legacy `limit` with a non-zero `resourceVersion`; a `continue` token). `resourceVersion` newer
than the store waits up to `FRESH_TIMEOUT` and then fails with 504 "Too large resource version".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from draplane.api import errors

FRESH_TIMEOUT = 3.0
"""kube-apiserver's watch cache blocks this long for a resourceVersion it has not seen yet."""

LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)
_MATCHES = ("Exact", "NotOlderThan")
_DIGITS = re.compile(r"[0-9]+")
_MAX_REVISION = 2**63 - 1


def parse_resource_version(value: str) -> int:
    """ "" and "0" are 0; anything but a non-negative integer is a 400 (upstream: a 500)."""
    if value in ("", "0"):
        return 0
    # ASCII digits only (str.isdigit also accepts "²" and other scripts' digits), within the
    # uint64 range a revision has upstream.
    if len(value) > 19 or not _DIGITS.fullmatch(value) or int(value) > _MAX_REVISION:
        raise errors.bad_request(f'invalid resource version "{value}"')
    return int(value)


def _invalid_options(causes: list[errors.FieldError]) -> errors.StatusError:
    err = errors.invalid_object("ListOptions.meta.k8s.io", "", causes)
    err.details["kind"] = "ListOptions"
    err.details["group"] = "meta.k8s.io"
    return err


def validate_list(*, resource_version: str, match: str, continue_: str) -> None:
    """apimachinery's ValidateListOptions for a LIST: 422 on ListOptions."""
    if not match:
        return
    causes: list[errors.FieldError] = []
    if not resource_version:
        causes.append(
            errors.forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            )
        )
    if continue_:
        causes.append(
            errors.forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            )
        )
    if match not in _MATCHES:
        causes.append(errors.not_supported("resourceVersionMatch", match, [*_MATCHES, ""]))
    if match == "Exact" and resource_version == "0":
        causes.append(
            errors.forbidden(
                "resourceVersionMatch",
                'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            )
        )
    if causes:
        raise _invalid_options(causes)


def validate_watch(*, match: str, send_initial_events: str) -> None:
    """ValidateListOptions for a watch with the WatchList feature gate off (1.28 default)."""
    causes: list[errors.FieldError] = []
    if send_initial_events:
        causes.append(
            errors.forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate "
                "is enabled",
            )
        )
    if match:
        causes.append(
            errors.forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            )
        )
    if causes:
        raise _invalid_options(causes)


@dataclass(frozen=True)
class ListRead:
    """What a LIST reads: `exact` a snapshot revision (None: the current state) no older than
    `min_revision`; `paginate` False when the watch cache answers (it ignores `limit`)."""

    min_revision: int = 0
    exact: int | None = None
    paginate: bool = True


def plan_list(*, resource_version: str, match: str, limit: int) -> ListRead:
    """For a LIST without `continue` (options already validated)."""
    rv = parse_resource_version(resource_version)
    if match == "Exact" or (not match and limit > 0 and rv > 0):
        return ListRead(rv, rv)
    if resource_version == "0":
        # Served by the watch cache, which ignores `limit`.
        return ListRead(0, None, paginate=False)
    return ListRead(rv, None)


def too_large(revision: int, current: int) -> errors.StatusError:
    return errors.StatusError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {revision}, current: {current}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )
