"""Declarations of the resource.k8s.io/v1 kinds (1.36; pkg/registry/resource/*/strategy.go):
DeviceClass, ResourceClaim (with the granular authorization of its status and the drop of
deallocated devices' status), ResourceClaimTemplate, ResourceSlice and v1beta2 DeviceTaintRule;
the v1beta1 and v1beta2 versions share the declaration of their v1 kind.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from draplane.api import auth, errors, fieldselector, kinds
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.validation import (
    deviceclaim,
    deviceclaimstatus,
    devicecommon,
    devicedefaults,
    deviceslice,
)
from draplane.apiserver import printers
from draplane.apiserver.authorization import Attributes, Decision
from draplane.apiserver.strategies import ResourceStrategy, draadmin
from draplane.apiserver.strategies.context import ServerContext
from draplane.apiserver.strategies.resource import drop_status
from draplane.dra.cel import SelectorCache


def _status(obj: Obj) -> Obj:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


DeviceKey = tuple[str, str, str, str]
"""A `status.devices` entry's key: driver, pool, device, shareID."""


def _device_key(entry: Any) -> DeviceKey:
    e = entry if isinstance(entry, dict) else {}
    return tuple(str(e.get(k) or "") for k in ("driver", "pool", "device", "shareID"))  # type: ignore[return-value]


def _allocated_keys(status: Obj) -> set[DeviceKey]:
    allocation = status.get("allocation")
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    return {_device_key(r) for r in results or [] if isinstance(r, dict)}


def _drop_deallocated_status_devices(new: Obj, old: Obj) -> None:
    """dropDeallocatedStatusDevices: a status update removes the `status.devices` entries of
    devices the old allocation held and the new one does not (stale after deallocation)."""
    status = new.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("devices"), list):
        return
    gone = _allocated_keys(_status(old)) - _allocated_keys(status)
    if not gone:
        return
    kept = [e for e in status["devices"] if _device_key(e) not in gone]
    if kept:
        status["devices"] = kept
    else:
        del status["devices"]


def _modified_drivers(new: Any, old: Any, deallocated: set[DeviceKey]) -> list[str]:
    """The drivers whose `status.devices` entries were added, removed or changed
    (getModifiedDrivers: entries keyed by driver, pool, device and shareID); the entries of
    `deallocated` devices, which the server drops itself, do not count."""
    entries = old if isinstance(old, list) else []
    before = {
        _device_key(e): e
        for e in entries
        if isinstance(e, dict) and _device_key(e) not in deallocated
    }
    drivers: set[str] = set()
    for entry in new if isinstance(new, list) else []:
        key = _device_key(entry)
        if key not in before or before.pop(key) != entry:
            drivers.add(key[0])
    drivers.update(key[0] for key in before)
    return sorted(drivers)


def _allocated_node(status: Obj) -> str:
    """The node of an allocation whose selector is one `metadata.name In [<node>]` field term
    (nodeNameFromAllocation), else ""."""
    allocation = status.get("allocation")
    selector = allocation.get("nodeSelector") if isinstance(allocation, dict) else None
    terms = selector.get("nodeSelectorTerms") if isinstance(selector, dict) else None
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], dict):
        return ""
    fields = terms[0].get("matchFields") or []
    if terms[0].get("matchExpressions") or not isinstance(fields, list) or len(fields) != 1:
        return ""
    f = fields[0] if isinstance(fields[0], dict) else {}
    values = f.get("values")
    if f.get("key") != "metadata.name" or f.get("operator") != "In":
        return ""
    return str(values[0]) if isinstance(values, list) and len(values) == 1 else ""


def _associated_with(user: UserInfo, node: str) -> bool:
    """saAssociatedWithAllocatedNode: a service account whose bound token names `node`."""
    if not node or not user.name.startswith(auth.SERVICE_ACCOUNT_PREFIX):
        return False
    return user.extra_dict().get(auth.NODE_NAME_KEY) == [node]


async def _check_claim_status(
    registry: ServerContext, user: UserInfo, new: Obj, old: Obj | None
) -> None:
    """A status update's checks against other objects: admin access (the namespace's label),
    then the granular authorization of its fields."""
    await draadmin.check_claim_status(registry, kinds.RESOURCE_CLAIMS_V1, new, old or {})
    await _authorize_claim_status(registry, user, new, old)


async def _authorize_claim_status(
    registry: ServerContext, user: UserInfo, new: Obj, old: Obj | None
) -> None:
    """DRAResourceClaimGranularStatusAuthorization (1.36, beta on; AuthorizedForBinding and
    AuthorizedForDeviceStatus): a change of `allocation` or `reservedFor` also needs `update`
    on `resourceclaims/binding` (cluster-wide), a change of a driver's `status.devices` entries
    `arbitrary-node:update` on `resourceclaims/driver` named by the driver, or
    `associated-node:update` for a service account whose token names the allocated node.
    Refusals are Forbidden field errors of a 422, as upstream's status validation returns."""
    md = new.get("metadata") or {}
    namespace, name = str(md.get("namespace") or ""), str(md.get("name") or "")
    status, old_status = _status(new), _status(old or {})

    def refusal(verb: str, subresource: str, resource_name: str, ns: str) -> str | None:
        """None when allowed, else the ForbiddenStatusError text of the synthetic request."""
        attrs = Attributes(
            user,
            verb,
            api_group=kinds.RESOURCE_GROUP,
            api_version="v1",
            resource="resourceclaims",
            subresource=subresource,
            namespace=ns,
            name=resource_name,
        )
        result = registry.authorizer.authorize(attrs)
        if result.decision is Decision.ALLOW:
            return None
        return errors.forbidden_resource(
            user.name,
            verb,
            kinds.RESOURCE_GROUP,
            "resourceclaims",
            ns,
            resource_name,
            result.reason,
            subresource=subresource,
        ).message

    causes: list[errors.FieldError] = []
    if any(status.get(k) != old_status.get(k) for k in ("allocation", "reservedFor")):
        denied = refusal("update", "binding", "", "")
        if denied is not None:
            causes.append(
                errors.forbidden(
                    "status",
                    "changing status.allocation or status.reservedFor requires resource="
                    f'"resourceclaims/binding", verb="update" permission: {denied}',
                )
            )
    verbs = ["arbitrary-node:update"]
    if _associated_with(user, _allocated_node(status)):
        verbs.insert(0, "associated-node:update")
    deallocated = _allocated_keys(old_status) - _allocated_keys(status)
    for driver in _modified_drivers(status.get("devices"), old_status.get("devices"), deallocated):
        refusals = [refusal(verb, "driver", driver, namespace) for verb in verbs]
        if all(refusals):
            causes.append(
                errors.forbidden(
                    "status.devices",
                    'changing status.devices requires resource="resourceclaims/driver", '
                    f'verb="[{" ".join(verbs)}]" permission: {refusals[0]}',
                )
            )
    if causes:
        raise errors.invalid_object("ResourceClaim", name, causes, kinds.RESOURCE_CLAIMS_V1)


def _compile_selector(expression: str) -> tuple[str | None, int]:
    """Device selectors compile at validation through the allocator's process-wide cache, so
    an expression admitted here is compiled once for the scheduler too (failures not cached)."""
    result = SelectorCache.shared().compiled(expression)
    return result.error, result.max_cost


devicecommon.use_selector_compiler(_compile_selector)


# resource.k8s.io/v1 (the 1.36 mode): a claim's status starts empty, every DELETE returns the
# object (pkg/registry/resource/*/strategy.go). The beta versions are written as v1 (converted
# before the store runs) and share their v1 kind's declaration.
_V1: tuple[ResourceStrategy, ...] = (
    ResourceStrategy(
        kinds.DEVICE_CLASSES,
        validate=deviceslice.validate_device_class,
        validate_update=deviceslice.validate_device_class_update,
        defaults=devicedefaults.default_spec,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIMS_V1,
        validate=deviceclaim.validate_claim,
        validate_update=deviceclaim.validate_claim_update,
        validate_status=deviceclaimstatus.validate_claim_status_update,
        defaults=devicedefaults.default_claim,
        printer=printers.RESOURCE_CLAIM,
        prepare_for_create=drop_status,
        delete_returns_object=True,
        check_write=draadmin.create_check(kinds.RESOURCE_CLAIMS_V1, template=False),
        check_status_write=_check_claim_status,
        prepare_for_status_update=_drop_deallocated_status_devices,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIM_TEMPLATES_V1,
        validate=deviceclaim.validate_claim_template,
        validate_update=deviceclaim.validate_claim_template_update,
        defaults=devicedefaults.default_claim_template,
        check_write=draadmin.create_check(kinds.RESOURCE_CLAIM_TEMPLATES_V1, template=True),
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_SLICES,
        validate=deviceslice.validate_resource_slice,
        validate_update=deviceslice.validate_resource_slice_update,
        defaults=devicedefaults.default_spec,
        printer=printers.RESOURCE_SLICE,
        fields=fieldselector.RESOURCE_SLICE_FIELDS,
        delete_returns_object=True,
    ),
)
_BY_RESOURCE = {s.rt.resource: s for s in _V1}
STRATEGIES: tuple[ResourceStrategy, ...] = (
    *_V1,
    ResourceStrategy(
        kinds.DEVICE_TAINT_RULES,
        validate=deviceslice.validate_device_taint_rule,
        validate_update=deviceslice.validate_device_taint_rule_update,
        defaults=devicedefaults.default_spec,
        delete_returns_object=True,
    ),
    *(
        replace(_BY_RESOURCE[rt.resource], rt=rt)
        for rt in (*kinds.STRUCTURED_V1BETA2, *kinds.STRUCTURED_V1BETA1)
    ),
)
