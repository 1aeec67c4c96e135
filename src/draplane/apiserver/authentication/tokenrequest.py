"""The `serviceaccounts/token` subresource: create an authentication.k8s.io/v1 TokenRequest.

`create_token` is kube-apiserver 1.34's TokenREST.Create (pkg/registry/core/serviceaccount/
storage/token.go) as pure steps over `lookup`: decode and default the body, check it against the
URL and the service account, validate it, resolve the bound object, cap the expiration, sign,
and answer the request with `status.token` and `status.expirationTimestamp`. Failures raise
`StatusError` with upstream's code and message; warnings are returned for `Warning:` headers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from draplane.api import errors, kinds, meta
from draplane.api.errors import FieldError, StatusError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import type_invalid
from draplane.apiserver.authentication.satokens import BoundObject, Lookup, TokenIssuer
from draplane.clock import format_time

API_VERSION = "authentication.k8s.io/v1"
KIND = "TokenRequest"
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 10 * 60
MAX_EXPIRATION_SECONDS = 1 << 32

# Until ServiceAccount and Secret are served kinds, their types for Status messages live here.
SERVICE_ACCOUNTS = ResourceType(
    kinds.CORE,
    "v1",
    "serviceaccounts",
    "ServiceAccount",
    True,
    "serviceaccount",
    ("sa",),
    ("token",),
)
SECRETS = ResourceType(kinds.CORE, "v1", "secrets", "Secret", True, "secret")
Admit = Callable[[Obj], Awaitable[None]]
"""The validating admission of a TokenRequest; raises StatusError to refuse it."""
# NewInvalid/NewConflict on the TokenRequest's group and kind: `TokenRequest.authentication.k8s.io`.
_TOKEN_REQUEST = ResourceType("authentication.k8s.io", "v1", KIND, KIND, True, "tokenrequest")


def _kind_type(group: str, kind: str) -> ResourceType:
    """The GroupResource{group, kind} upstream names a bound object's conflict with."""
    return ResourceType(group, "", kind, kind, True, kind.lower())


def _invalid(name: str, causes: list[FieldError]) -> StatusError:
    return errors.invalid_object(KIND, name, causes, _TOKEN_REQUEST)


def _strings(obj: Obj, keys: tuple[str, ...], path: str, name: str) -> dict[str, str]:
    """The string fields of obj (missing or null: ""), a 422 for any other type."""
    out: dict[str, str] = {}
    for key in keys:
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise _invalid(name, [type_invalid(f"{path}{key}", value, "must be a string")])
        out[key] = value or ""
    return out


def _object(obj: Obj, key: str, path: str, name: str) -> Obj:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _invalid(name, [type_invalid(path + key, value, "must be an object")])
    return value


def decode(body: Any, sa_name: str) -> Obj:
    """The request as a defaulted TokenRequest (v1 SetDefaults: expirationSeconds 3600)."""
    if not isinstance(body, dict):
        raise errors.bad_request("the request body must be an object")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind not in (None, "", KIND) or api_version not in (None, "", API_VERSION):
        raise errors.bad_request(
            f"the request body must be a {KIND} ({API_VERSION}), got {api_version}, Kind={kind}"
        )
    md = meta.deep_copy(_object(body, "metadata", "", sa_name))
    _strings(md, ("name", "namespace", "uid"), "metadata.", sa_name)
    spec = _object(body, "spec", "", sa_name)
    audiences = spec.get("audiences")
    if audiences is None:
        audiences = []
    if not isinstance(audiences, list):
        raise _invalid(sa_name, [type_invalid("spec.audiences", audiences, "must be a list")])
    for i, aud in enumerate(audiences):
        if not isinstance(aud, str):
            raise _invalid(sa_name, [type_invalid(f"spec.audiences[{i}]", aud, "must be a string")])
    expiration = spec.get("expirationSeconds")
    if expiration is None:
        expiration = DEFAULT_EXPIRATION_SECONDS
    if isinstance(expiration, bool) or not isinstance(expiration, int):
        raise _invalid(
            sa_name, [type_invalid("spec.expirationSeconds", expiration, "must be an integer")]
        )
    # boundObjectRef has no omitempty upstream: a request without one answers `null`.
    out_spec: Obj = {
        "audiences": list(audiences),
        "expirationSeconds": expiration,
        "boundObjectRef": None,
    }
    if spec.get("boundObjectRef") is not None:
        ref = _object(spec, "boundObjectRef", "spec.", sa_name)
        keys = ("kind", "apiVersion", "name", "uid")
        out_spec["boundObjectRef"] = {
            k: v for k, v in _strings(ref, keys, "spec.boundObjectRef.", sa_name).items() if v
        }
    return {"kind": KIND, "apiVersion": API_VERSION, "metadata": md, "spec": out_spec}


def validate(req: Obj) -> list[FieldError]:
    """ValidateTokenRequest: the expiration between 10 minutes and 2^32 seconds."""
    seconds = req["spec"]["expirationSeconds"]
    if seconds < MIN_EXPIRATION_SECONDS:
        detail = "may not specify a duration less than 10 minutes"
    elif seconds > MAX_EXPIRATION_SECONDS:
        detail = "may not specify a duration larger than 2^32 seconds"
    else:
        return []
    return [errors.invalid("spec.expirationSeconds", seconds, detail)]


def _group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion; None for more than one `/`."""
    if api_version in ("", "/"):
        return "", ""
    if api_version.count("/") > 1:
        return None
    group, _, version = api_version.rpartition("/")
    return group, version


async def _get(lookup: Lookup, rt: ResourceType, namespace: str, name: str) -> Obj:
    if not name:
        raise errors.bad_request("Name parameter required.")
    obj = await lookup(rt.resource, namespace if rt.namespaced else "", name)
    if obj is None:
        raise errors.not_found(rt, name)
    return obj


async def bound_object(ref: Obj, namespace: str, sa_name: str, lookup: Lookup) -> BoundObject:
    """The object `spec.boundObjectRef` names, checked as upstream does."""
    kind, name = ref.get("kind", ""), ref.get("name", "")
    gv = _group_version(ref.get("apiVersion", ""))
    group, version = gv if gv is not None else ("", "")
    node_name = node_uid = ""
    if group == "" and kind == "Pod":
        pod = await _get(lookup, kinds.PODS, namespace, name)
        if (pod.get("spec") or {}).get("serviceAccountName", "") != sa_name:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{sa_name}" to pod running with '
                "different serviceaccount name."
            )
        node_name = (pod.get("spec") or {}).get("nodeName") or ""
        if node_name:
            # A pod's node that does not exist still names the node in the token, without uid.
            node = await lookup(kinds.NODES.resource, "", node_name)
            node_uid = meta.uid(node) if node is not None else ""
        obj = pod
    elif group == "" and kind == "Node":
        obj = await _get(lookup, kinds.NODES, "", name)
    elif group == "" and kind == "Secret":
        obj = await _get(lookup, SECRETS, namespace, name)
    else:
        raise errors.bad_request(
            f"cannot bind token to object of type {group}/{version}, Kind={kind}"
        )
    uid = meta.uid(obj)
    if ref.get("uid") and ref["uid"] != uid:
        raise errors.conflict(
            _kind_type(group, kind),
            name,
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    return BoundObject(kind, name, uid, node_name, node_uid)


async def create_token(
    body: Any,
    namespace: str,
    sa_name: str,
    lookup: Lookup,
    issuer: TokenIssuer,
    now: datetime,
    admit: Admit | None = None,
) -> tuple[Obj, list[str]]:
    """POST .../namespaces/NS/serviceaccounts/NAME/token: the TokenRequest with its status, and
    the warnings to send. `admit` is the validating admission of the request (createValidation:
    NodeRestriction), run on a copy once the request is valid, before the bound object is read."""
    req = decode(body, sa_name)
    md, spec = req["metadata"], req["spec"]
    for key, want in (("name", sa_name), ("namespace", namespace)):
        if md.get(key) and md[key] != want:
            detail = f"must match the service account {key} if specified"
            raise _invalid(sa_name, [errors.invalid(f"metadata.{key}", md[key], detail)])
    account = await _get(lookup, SERVICE_ACCOUNTS, namespace, sa_name)
    sa_uid = meta.uid(account)
    if md.get("uid") and md["uid"] != sa_uid:
        raise errors.conflict(
            _TOKEN_REQUEST,
            sa_name,
            f"the UID in the token request ({md['uid']}) does not match the UID of the service "
            f"account ({sa_uid})",
        )
    if not spec["audiences"]:
        spec["audiences"] = list(issuer.api_audiences)
    md["name"], md["namespace"], md["uid"] = sa_name, namespace, sa_uid
    md["creationTimestamp"] = format_time(now)
    if causes := validate(req):
        raise _invalid("", causes)
    if admit is not None:
        await admit(meta.deep_copy(req))

    bound = None
    if spec["boundObjectRef"] is not None:
        bound = await bound_object(spec["boundObjectRef"], namespace, sa_name, lookup)

    warnings: list[str] = []
    limit = issuer.max_expiration_seconds
    if limit > 0 and spec["expirationSeconds"] > limit:
        warnings.append(
            f"requested expiration of {spec['expirationSeconds']} seconds shortened to "
            f"{limit} seconds"
        )
        spec["expirationSeconds"] = limit

    token, expires = issuer.issue(
        namespace, sa_name, sa_uid, spec["audiences"], spec["expirationSeconds"], bound, now
    )
    req["status"] = {"token": token, "expirationTimestamp": format_time(expires)}
    return req, warnings
