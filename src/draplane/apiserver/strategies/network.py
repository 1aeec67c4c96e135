"""Strategies of Secrets, Services, Endpoints and EndpointSlices (pkg/registry/core/secret,
service, endpoint; pkg/registry/discovery/endpointslice).

A Secret's `data` values must be base64 (400, as decoding the body fails upstream); Services
get their cluster IP and node ports from the registry's `ServiceAllocator` just before they are
stored, and DELETE answers with the Service (the others answer with a Status).
"""

from __future__ import annotations

import binascii
import re

from draplane.api import errors, kinds
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.validation import network, networkdefaults
from draplane.apiserver import networkprinters
from draplane.apiserver.serviceips import keep_allocated
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.strategies.context import ServerContext

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _bad_byte(value: str) -> int | None:
    """Where Go's StdEncoding stops decoding `value`, or None when it decodes."""
    try:
        binascii.a2b_base64(value.encode(), strict_mode=True)
        return None
    except (binascii.Error, ValueError):
        pass
    match = _BASE64.match(value)
    end = match.end() if match else 0
    return end if end < len(value) else max(0, len(value) - len(value) % 4)


def check_secret_data(obj: Obj) -> None:
    data = obj.get("data")
    for value in data.values() if isinstance(data, dict) else []:
        if not isinstance(value, str):
            continue
        at = _bad_byte(value)
        if at is not None:
            raise errors.bad_request(
                'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at '
                f"input byte {at}"
            )


def _update_secret(new: Obj, old: Obj) -> None:
    check_secret_data(new)


async def _allocate(registry: ServerContext, user: UserInfo, obj: Obj, old: Obj | None) -> None:
    await registry.service_ips.assign(registry.storage, obj, old)


def _update_service(new: Obj, old: Obj) -> None:
    spec = new.get("spec")
    if isinstance(spec, dict):
        keep_allocated(spec, old.get("spec") or {})


def _service_status(obj: Obj) -> None:
    obj["status"] = {"loadBalancer": {}}


STRATEGIES = (
    ResourceStrategy(
        kinds.SECRETS,
        validate=network.validate_secret,
        validate_update=network.validate_secret_update,
        defaults=networkdefaults.default_secret,
        printer=networkprinters.SECRET,
        prepare_for_create=check_secret_data,
        prepare_for_update=_update_secret,
    ),
    ResourceStrategy(
        kinds.SERVICES,
        validate=network.validate_service,
        validate_update=network.validate_service_update,
        validate_status=network.validate_service_status_update,
        defaults=networkdefaults.default_service,
        printer=networkprinters.SERVICE,
        prepare_for_create=_service_status,
        prepare_for_update=_update_service,
        delete_returns_object=True,
        check_write=_allocate,
    ),
    ResourceStrategy(
        kinds.ENDPOINTS,
        validate=network.validate_endpoints,
        validate_update=network.validate_endpoints_update,
        defaults=networkdefaults.default_endpoints,
        printer=networkprinters.ENDPOINTS,
    ),
    ResourceStrategy(
        kinds.ENDPOINT_SLICES,
        validate=network.validate_endpoint_slice,
        validate_update=network.validate_endpoint_slice_update,
        defaults=networkdefaults.default_endpoint_slice,
        printer=networkprinters.ENDPOINT_SLICE,
    ),
)
