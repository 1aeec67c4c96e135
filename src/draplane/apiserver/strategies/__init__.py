"""One declaration per served kind: what the API server does with it (kube-apiserver's
pkg/registry/<group>/<kind>/strategy.go and its TableConvertor).

A `ResourceStrategy` declares, for one kind: its defaulting, its validation for create, update
and `status` updates (functions of the group's module in `draplane.api.validation`), how a
create is prepared (what it keeps of `status`), whether it has a `status` subresource, its
printer (the Table columns), its selectable fields (field selectors), its
graceful-deletion default, whether DELETE returns the object or a Status, whether deletion
propagates to dependents, the handlers of its other subresources (`pods/binding`,
`serviceaccounts/token`), a storage-time check (RBAC's escalation check), and, for kinds that
are never stored (the review APIs), what a create answers. Each API group's module here
declares its kinds (`core.py`, `resource.py`, ...); `table.py` collects them, and every
per-kind table of the server is derived from that list. Hooks receive the narrow
`context.ServerContext`, never the whole registry. Adding a kind is its `ResourceType`
(`draplane.api.kinds`), its schema (`draplane.api.schema`), its validation module and one
declaration here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from draplane.api.auth import UserInfo
from draplane.api.crd import ScaleSubresource
from draplane.api.errors import FieldError
from draplane.api.fieldselector import FieldGetter, selectable
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.api.schema import Schemas
from draplane.api.validation import CreateFn, TypedCreateFn, TypedUpdateFn, UpdateFn
from draplane.api.validation.core import (
    validate_generic,
    validate_generic_status_update,
    validate_generic_update,
)
from draplane.apiserver import printing
from draplane.apiserver.printing import Printer
from draplane.apiserver.strategies.context import ServerContext

SubresourceCreate = Callable[[ServerContext, UserInfo, Request], Awaitable[Obj]]
"""A POST to a subresource (or to a kind that is never stored): returns the response object."""
WriteCheck = Callable[[ServerContext, UserInfo, Obj, "Obj | None"], Awaitable[None]]
"""Runs just before a create or update is stored (RBAC's escalation check)."""
Defaulter = Callable[[Obj], None]


def _keep(obj: Obj) -> None:
    """Create keeps the object as sent."""


def _no_grace(obj: Obj, requested: int | None) -> int:
    return 0


@dataclass(frozen=True)
class ResourceStrategy:
    rt: ResourceType
    validate: CreateFn | None = None
    """Create validation; None: ObjectMeta's only."""
    validate_update: UpdateFn | None = None
    """Main-resource update validation; None: ObjectMeta's only."""
    validate_status: UpdateFn | None = None
    """`status` update validation; None: ObjectMeta's only."""
    validate_typed: TypedCreateFn | None = None
    """Create validation that reads the served Go types, in place of `validate` (pods and the
    kinds with a pod template)."""
    validate_update_typed: TypedUpdateFn | None = None
    """Main-resource update validation that reads the served Go types, in place of
    `validate_update`."""
    defaults: Defaulter | None = None
    """Defaulting on create and update (SetDefaults_*), in place."""
    printer: Printer = printing.DEFAULT
    """The Table columns (kubectl get)."""
    fields: Mapping[str, FieldGetter] = field(default_factory=dict)
    """Selectable fields besides metadata.name and metadata.namespace (GetAttrs)."""
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

    @property
    def selectable_fields(self) -> dict[str, FieldGetter]:
        """Every field a field selector may name on this kind."""
        return selectable(self.fields)

    def apply_defaults(self, obj: Obj) -> None:
        if self.defaults is not None and isinstance(obj, dict):
            self.defaults(obj)

    # The kind's validation (the registry checked the field types already, where
    # kube-apiserver decodes the body), against the Go types of the version served.
    def validate_create(self, obj: Obj, schemas: Schemas) -> list[FieldError]:
        if self.validate_typed is not None:
            return self.validate_typed(obj, schemas)
        if self.validate is None:
            return validate_generic(self.rt, obj)
        return self.validate(obj)

    def validate_main_update(self, obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
        if self.validate_update_typed is not None:
            return self.validate_update_typed(obj, old, schemas)
        if self.validate_update is None:
            return validate_generic_update(self.rt, obj, old)
        return self.validate_update(obj, old)

    def validate_status_update(self, obj: Obj, old: Obj) -> list[FieldError]:
        if self.validate_status is None:
            return validate_generic_status_update(obj, old)
        return self.validate_status(obj, old)


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
