"""Per-kind behaviour of the API server in one table (kube-apiserver's REST strategies).

A `ResourceStrategy` says, for one kind: how a create is prepared (what it keeps of `status`),
its validation for create, update and `status` updates (the kind's validation functions, as
`draplane.api.validation` registers them), whether it has a `status` subresource,
its graceful-deletion default, whether DELETE returns the object or a Status, whether deletion
propagates to dependents, the handlers of its other subresources (`pods/binding`,
`namespaces/finalize`, `serviceaccounts/token`), a storage-time check (RBAC's escalation check),
and, for kinds that are never stored (the review APIs), what a create answers. `STRATEGIES` holds
one entry per served kind (`table.py`); adding a kind is adding one entry and its validation
module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from draplane.api import validation
from draplane.api.auth import UserInfo
from draplane.api.crd import ScaleSubresource
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.request import Request

if TYPE_CHECKING:
    from draplane.apiserver.registry import Registry

SubresourceCreate = Callable[["Registry", UserInfo, Request], Awaitable[Obj]]
"""A POST to a subresource (or to a kind that is never stored): returns the response object."""
WriteCheck = Callable[["Registry", UserInfo, Obj, "Obj | None"], Awaitable[None]]
"""Runs just before a create or update is stored (RBAC's escalation check)."""


def _keep(obj: Obj) -> None:
    """Create keeps the object as sent."""


def _no_grace(obj: Obj, requested: int | None) -> int:
    return 0


@dataclass(frozen=True)
class ResourceStrategy:
    rt: ResourceType
    prepare_for_create: Callable[[Obj], None] = _keep
    grace_period: Callable[[Obj, int | None], int] = _no_grace
    """Seconds of graceful deletion for the object and the requested gracePeriodSeconds."""
    delete_returns_object: bool = False
    """DELETE answers with the object (genericregistry.Store.ReturnDeletedObject), else a
    Status."""
    has_dependents: bool = True
    """Orphan and Foreground propagation add their finalizers (not for Events)."""
    subresource_create: Mapping[str, SubresourceCreate] = field(default_factory=dict)
    check_write: WriteCheck | None = None
    check_status_write: WriteCheck | None = None
    """Runs just before a `status` update is stored (extra authorization of its fields)."""
    create_only: SubresourceCreate | None = None
    """Kinds never stored: a create is answered by this function (review APIs)."""
    prepare_for_update: Callable[[Obj, Obj], None] | None = None
    """Adjusts a main-resource update (new, old) after the server fields are merged."""
    prepare_for_status_update: Callable[[Obj, Obj], None] | None = None
    """Adjusts a `status` update (new, old) after the status is merged into the stored object."""
    generation_on_annotations: bool = False
    """Annotation changes bump `metadata.generation` too (Deployments)."""
    default_propagation: str = "Background"
    """The propagation policy of a DELETE that names none (Orphan for batch/v1 Jobs)."""
    status_zeros: tuple[str, ...] = ()
    """Status counters Go encodes even when 0 (no omitempty): filled in on every write."""
    status_writes_annotations: bool = False
    """A `status` write may change annotations (Deployments: deploymentStatusStrategy resets
    only spec and labels, and the controller writes its revision annotation that way)."""
    scale: ScaleSubresource | None = None
    """Where the `scale` subresource reads and writes replicas and the selector (`scale.py`);
    None: the kind serves no `scale`."""

    def fill_status(self, obj: Obj) -> None:
        """Puts the always-encoded status counters (as 0) into `obj`'s status."""
        if not self.status_zeros:
            return
        status = obj.get("status")
        if status is None:
            status = obj["status"] = {}
        if isinstance(status, dict):
            for key in self.status_zeros:
                if status.get(key) is None:
                    status[key] = 0

    @property
    def status_subresource(self) -> bool:
        return "status" in self.rt.subresources

    def normalize(self, obj: Obj) -> None:
        """Prune and default a write before validation (custom resources' structural schema;
        built-in kinds default through `draplane.api.validation.default`)."""

    # The kind's validation is its validation module's, registered in `draplane.api.validation`
    # (the registry checked the field types already, where kube-apiserver decodes the body).
    def validate_create(self, obj: Obj) -> list[FieldError]:
        return validation.create_rules(self.rt, obj)

    def validate_main_update(self, obj: Obj, old: Obj) -> list[FieldError]:
        return validation.update_rules(self.rt, obj, old)

    def validate_status_update(self, obj: Obj, old: Obj) -> list[FieldError]:
        return validation.status_rules(self.rt, obj, old)


def same_content(new: Obj, old: Obj) -> bool:
    """True when an update would store exactly what is there (no write, no event)."""
    new_md: dict[str, Any] = dict(new.get("metadata") or {})
    old_md: dict[str, Any] = dict(old.get("metadata") or {})
    new_md.pop("resourceVersion", None)
    old_md.pop("resourceVersion", None)
    if new_md != old_md:
        return False
    keys = (set(new) | set(old)) - {"metadata", "kind", "apiVersion"}
    return all(new.get(k) == old.get(k) for k in keys)
