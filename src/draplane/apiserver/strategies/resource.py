"""Strategies of the resource.k8s.io/v1alpha2 kinds (pkg/registry/resource/*/strategy.go):
claims and scheduling contexts drop the `status` sent on create (it starts empty, `{}`); every
DELETE returns the object."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from draplane.api import errors, kinds
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.validation import devicecommon
from draplane.apiserver.authorization import Attributes, Decision
from draplane.apiserver.strategies import ResourceStrategy
from draplane.dra.cel import SelectorCache

if TYPE_CHECKING:
    from draplane.apiserver.registry import Registry


def _drop_status(obj: Obj) -> None:
    """Create ignores the status sent; the empty status struct is still on the wire."""
    obj["status"] = {}


STRATEGIES: tuple[ResourceStrategy, ...] = (
    ResourceStrategy(
        kinds.RESOURCE_CLASSES,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIMS,
        prepare_for_create=_drop_status,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.RESOURCE_CLAIM_TEMPLATES,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.POD_SCHEDULING_CONTEXTS,
        prepare_for_create=_drop_status,
        delete_returns_object=True,
    ),
)


def _status(obj: Obj) -> Obj:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _by_driver(entries: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        driver = entry.get("driver") if isinstance(entry, dict) else None
        out.setdefault(str(driver or ""), []).append(entry)
    return out


async def _authorize_claim_status(
    registry: Registry, user: UserInfo, new: Obj, old: Obj | None
) -> None:
    """DRAResourceClaimGranularStatusAuthorization (1.36, beta on): a change of `allocation` or
    `reservedFor` also needs `update` on `resourceclaims/binding`, a change of a driver's
    `status.devices` entries `arbitrary-node:update` (or `associated-node:update` for a node's
    own user) on `resourceclaims/driver` named by the driver."""
    md = new.get("metadata") or {}
    namespace, name = str(md.get("namespace") or ""), str(md.get("name") or "")
    status, old_status = _status(new), _status(old or {})

    def allowed(verb: str, subresource: str, resource_name: str) -> bool:
        attrs = Attributes(
            user,
            verb,
            api_group=kinds.RESOURCE_GROUP,
            api_version="v1",
            resource="resourceclaims",
            subresource=subresource,
            namespace=namespace,
            name=resource_name,
        )
        return registry.authorizer.authorize(attrs).decision is Decision.ALLOW

    def deny(subresource: str, verb: str, detail: str) -> errors.StatusError:
        return errors.forbidden_message(
            f'resourceclaims.resource.k8s.io "{name}" is forbidden: User "{user.name}" cannot '
            f'{verb} resource "resourceclaims/{subresource}" in API group '
            f'"{kinds.RESOURCE_GROUP}" in the namespace "{namespace}": {detail}',
            kinds.RESOURCE_CLAIMS_V1,
            name,
        )

    binding = any(status.get(k) != old_status.get(k) for k in ("allocation", "reservedFor"))
    if binding and not allowed("update", "binding", name):
        raise deny("binding", "update", "changing allocation or reservedFor")
    new_devices, old_devices = (
        _by_driver(status.get("devices")),
        _by_driver(old_status.get("devices")),
    )
    for driver in sorted(set(new_devices) | set(old_devices)):
        if new_devices.get(driver) == old_devices.get(driver):
            continue
        node_ok = user.node_name is not None and allowed("associated-node:update", "driver", driver)
        if not node_ok and not allowed("arbitrary-node:update", "driver", driver):
            raise deny("driver", "arbitrary-node:update", f"changing the status of driver {driver}")


def _compile_selector(expression: str) -> tuple[str | None, int]:
    """Device selectors compile at validation through the allocator's process-wide cache, so
    an expression admitted here is compiled once for the scheduler too (failures not cached)."""
    result = SelectorCache.shared().compiled(expression)
    return result.error, result.max_cost


devicecommon.use_selector_compiler(_compile_selector)


# resource.k8s.io/v1 (the 1.36 mode; the beta versions are written as v1): a claim's status
# starts empty, every DELETE returns the object (pkg/registry/resource/*/strategy.go).
STRATEGIES = (
    *STRATEGIES,
    ResourceStrategy(kinds.DEVICE_CLASSES, delete_returns_object=True),
    ResourceStrategy(
        kinds.RESOURCE_CLAIMS_V1,
        prepare_for_create=_drop_status,
        delete_returns_object=True,
        check_status_write=_authorize_claim_status,
    ),
    ResourceStrategy(kinds.RESOURCE_CLAIM_TEMPLATES_V1, delete_returns_object=True),
    ResourceStrategy(kinds.RESOURCE_SLICES, delete_returns_object=True),
    ResourceStrategy(kinds.DEVICE_TAINT_RULES, delete_returns_object=True),
)
