"""The claims of a service-account token, decoded from a verified JWT payload.

`parse_claims` checks the types as kube-apiserver's JSON decoding does (go-jose's `jwt.Claims`
plus the `kubernetes.io` private claims) and raises `AuthenticationError` with a message in the
style of that decoder for a claim of the wrong type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class AuthenticationError(Exception):
    """An invalid service-account token; `str(err)` is kube-apiserver's reason (the client only
    sees 401 Unauthorized)."""


@dataclass(frozen=True)
class Ref:
    name: str = ""
    uid: str = ""


@dataclass(frozen=True)
class Claims:
    aud: tuple[str, ...]
    exp: int | None
    nbf: int | None
    iat: int | None
    jti: str
    namespace: str
    serviceaccount: Ref
    pod: Ref | None
    secret: Ref | None
    node: Ref | None
    warnafter: int | None


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type_error(value: Any, path: str, go_type: str) -> AuthenticationError:
    return AuthenticationError(
        f"json: cannot unmarshal {_json_kind(value)} into Go struct field {path} of type {go_type}"
    )


def _str(obj: dict[str, Any], key: str, path: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _type_error(value, f"{path}.{key}", "string")
    return value


def _date(obj: dict[str, Any], key: str) -> int | None:
    """A NumericDate: any JSON number, truncated to whole seconds."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AuthenticationError(
            "go-jose/go-jose/jwt: expected number value to unmarshal into NumericDate"
        )
    return int(value)


def _audience(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise AuthenticationError(
        "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience"
    )


def _object(obj: dict[str, Any], key: str, path: str, go_type: str) -> dict[str, Any] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _type_error(value, f"{path}.{key}", go_type)
    return value


def _ref(obj: dict[str, Any], key: str) -> Ref | None:
    value = _object(obj, key, "privateClaims.kubernetes.io", "serviceaccount.ref")
    if value is None:
        return None
    path = f"privateClaims.kubernetes.io.{key}"
    return Ref(_str(value, "name", path), _str(value, "uid", path))


def parse_claims(payload: dict[str, Any]) -> Claims:
    k8s = _object(payload, "kubernetes.io", "privateClaims", "serviceaccount.kubernetes") or {}
    return Claims(
        aud=_audience(payload.get("aud")),
        exp=_date(payload, "exp"),
        nbf=_date(payload, "nbf"),
        iat=_date(payload, "iat"),
        jti=_str(payload, "jti", "Claims"),
        namespace=_str(k8s, "namespace", "privateClaims.kubernetes.io"),
        serviceaccount=_ref(k8s, "serviceaccount") or Ref(),
        pod=_ref(k8s, "pod"),
        secret=_ref(k8s, "secret"),
        node=_ref(k8s, "node"),
        warnafter=_date(k8s, "warnafter"),
    )
