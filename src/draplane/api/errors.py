"""Kubernetes Status errors: one exception type carrying code, reason, message and details.

Every layer raises `StatusError`; the API server writes `err.status()` as the response body, and
`RESTClient` turns a Status body back into the same exception, so callers test `err.reason`
(or the `is_*` helpers) whichever transport they use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from draplane.api.kinds import ResourceType


@dataclass(frozen=True)
class FieldError:
    """One cause of a 422 Invalid: `type` is the Kubernetes cause reason (FieldValueRequired...)."""

    type: str
    field: str
    detail: str = ""
    value: Any = None

    def message(self) -> str:
        text = {
            "FieldValueRequired": "Required value",
            "FieldValueInvalid": "Invalid value",
            "FieldValueNotSupported": "Unsupported value",
            "FieldValueDuplicate": "Duplicate value",
            "FieldValueForbidden": "Forbidden",
            "FieldValueNotFound": "Not found",
            "FieldValueTooLong": "Too long",
            "FieldValueTooMany": "Too many",
            "FieldValueTypeInvalid": "Invalid value",
            "InternalError": "Internal error",
        }.get(self.type, "Invalid value")
        if (
            self.type
            in (
                "FieldValueInvalid",
                "FieldValueNotSupported",
                "FieldValueDuplicate",
                "FieldValueNotFound",
                "FieldValueTypeInvalid",
            )
            and self.value is not None
        ):
            text = f"{text}: {_quote(self.value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", path, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueInvalid", path, detail, value)


def not_supported(path: str, value: Any, valid: list[str]) -> FieldError:
    return FieldError(
        "FieldValueNotSupported",
        path,
        "supported values: " + ", ".join(f'"{v}"' for v in valid),
        value,
    )


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError("FieldValueDuplicate", path, "", value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", path, detail)


def not_found_field(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError("FieldValueNotFound", path, detail, value)


def too_many(path: str, actual: int, limit: int) -> FieldError:
    return FieldError("FieldValueTooMany", path, f"must have at most {limit} items", actual)


@dataclass
class StatusError(Exception):
    code: int
    reason: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    list_meta: dict[str, Any] = field(default_factory=dict)
    """The Status's `metadata` (ListMeta): an expired `continue` carries a fresh token there."""

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body

    @classmethod
    def from_status(cls, body: dict[str, Any], code: int) -> StatusError:
        return cls(
            code=int(body.get("code") or code),
            reason=str(body.get("reason") or ""),
            message=str(body.get("message") or ""),
            details=dict(body.get("details") or {}),
            list_meta=dict(body.get("metadata") or {}),
        )


def _details(rt: ResourceType | None, name: str | None) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if rt is not None:
        if rt.group:
            d["group"] = rt.group
        d["kind"] = rt.resource
    return d


def not_found(rt: ResourceType, name: str) -> StatusError:
    return StatusError(
        404, "NotFound", f'{rt.group_resource} "{name}" not found', _details(rt, name)
    )


def already_exists(rt: ResourceType, name: str) -> StatusError:
    return StatusError(
        409, "AlreadyExists", f'{rt.group_resource} "{name}" already exists', _details(rt, name)
    )


def conflict(rt: ResourceType, name: str, detail: str | None = None) -> StatusError:
    detail = detail or (
        "the object has been modified; please apply your changes to the latest version "
        "and try again"
    )
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {rt.group_resource} "{name}": {detail}',
        _details(rt, name),
    )


def invalid_object(
    kind: str, name: str, causes: list[FieldError], rt: ResourceType | None = None
) -> StatusError:
    summary = ", ".join(f"{c.field}: {c.message()}" for c in causes)
    if len(causes) > 1:
        summary = "[" + summary + "]"
    details = _details(rt, name)
    details["kind"] = kind
    details["causes"] = [
        {"reason": c.type, "message": c.message(), "field": c.field} for c in causes
    ]
    # NewInvalid names the qualified kind: `ResourceClaim.resource.k8s.io "x" is invalid`.
    qualified = f"{kind}.{rt.group}" if rt is not None and rt.group else kind
    return StatusError(422, "Invalid", f'{qualified} "{name}" is invalid: {summary}', details)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def unprocessable(message: str) -> StatusError:
    """kube-apiserver's generic 422 (NewGenericServerResponse): reason Invalid, one cause."""
    return StatusError(422, "Invalid", message, {"causes": [{"message": message}]})


def unauthorized(message: str = "Unauthorized") -> StatusError:
    return StatusError(401, "Unauthorized", message)


def forbidden_request(
    user: str,
    verb: str,
    rt: ResourceType | None,
    namespace: str | None,
    name: str | None = None,
    detail: str = "",
    *,
    subresource: str = "",
) -> StatusError:
    """The authorization filter's 403 for a request on `rt`."""
    return forbidden_resource(
        user,
        verb,
        rt.group if rt else "",
        rt.resource if rt else "",
        namespace,
        name,
        detail,
        subresource=subresource,
        details=_details(rt, name),
    )


def forbidden_resource(
    user: str,
    verb: str,
    group: str,
    resource: str,
    namespace: str | None,
    name: str | None = None,
    detail: str = "",
    *,
    subresource: str = "",
    details: dict[str, Any] | None = None,
) -> StatusError:
    """The authorization filter's 403 (responsewriters.Forbidden): `<resource>[.<group>]
    ["<name>"] is forbidden: User "<u>" cannot <verb> resource "<res>[/<sub>]" in API group
    "<g>" in the namespace "<ns>"` (or `at the cluster scope`), then `: <reason>`."""
    what = f"{resource}.{group}" if group and resource else resource
    full = f"{resource}/{subresource}" if subresource else resource
    scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    subject = f'{what} "{name}"' if name else what
    msg = (f"{subject} is forbidden: " if subject else "forbidden: ") + (
        f'User "{user}" cannot {verb} resource "{full}" in API group "{group}"{scope}'
    )
    if detail:
        msg += f": {detail}"
    if details is None:
        details = {"kind": resource}
        if name:
            details["name"] = name
        if group:
            details["group"] = group
    return StatusError(403, "Forbidden", msg, details)


def forbidden_path(user: str, verb: str, path: str, detail: str = "") -> StatusError:
    """The 403 of a non-resource request (`/apis`, `/metrics`, ...)."""
    msg = f'forbidden: User "{user}" cannot {verb} path "{path}"'
    if detail:
        msg += f": {detail}"
    return StatusError(403, "Forbidden", msg, {})


def forbidden_message(
    message: str, rt: ResourceType | None = None, name: str | None = None
) -> StatusError:
    return StatusError(403, "Forbidden", message, _details(rt, name))


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> StatusError:
    return StatusError(405, "MethodNotAllowed", message)


def not_acceptable(message: str) -> StatusError:
    return StatusError(406, "NotAcceptable", message)


def gone(message: str) -> StatusError:
    return StatusError(410, "Gone", message)


def expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def too_large(message: str = "Request entity too large: limit is 3145728") -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", message)


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types "
        f"include: application/json, application/yaml, "
        f'application/vnd.kubernetes.protobuf; got "{content_type}"',
    )


def too_many_requests(message: str) -> StatusError:
    return StatusError(429, "TooManyRequests", message)


def internal(message: str) -> StatusError:
    return StatusError(500, "InternalError", f"Internal error occurred: {message}")


def server_timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message)


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.reason == "NotFound"


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.reason == "AlreadyExists"


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.reason == "Conflict"


def is_invalid(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.reason == "Invalid"


def is_expired(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.code == 410
