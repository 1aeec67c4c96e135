"""Strategy of custom resources (apiextensions-apiserver pkg/registry/customresource): every
write is pruned of the fields the version's structural schema does not know, defaulted, and
validated against the schema after the ObjectMeta rules, then against its CEL validation
rules (`draplane.apiserver.crdcel`); with a `status` subresource the main resource ignores
status and `status` ignores everything else (generation bumps on other changes, as `merge`
does for every kind). Objects are stored at the CRD's storage version."""

from __future__ import annotations

from dataclasses import dataclass

from draplane.api import names, structural
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.schema import Schemas
from draplane.api.validation.objectmeta import (
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.apiserver.strategies import ResourceStrategy


def _prune_and_default(strategy: ResourceStrategy, obj: Obj) -> None:
    custom = strategy.rt.custom
    structural.prune(custom.schema, obj)
    structural.default(custom.schema, obj)
    # Stored at the storage version (conversion None: only apiVersion changes).
    obj["apiVersion"] = f"{strategy.rt.group}/{custom.storage_version}"


@dataclass(frozen=True)
class CustomResourceStrategy(ResourceStrategy):
    def normalize(self, obj: Obj) -> None:
        _prune_and_default(self, obj)

    def _schema_errors(self, obj: Obj, old: Obj | None = None) -> list[FieldError]:
        schema = self.rt.custom.schema
        errs = structural.validate(schema, obj)
        # A value of the wrong type blocks the validation rules (hasBlockingErr).
        if not self.rt.custom.has_rules or any("must be of type" in e.detail for e in errs):
            return errs
        # Imported on first use: the CEL binding is large, most servers never need it.
        from draplane.apiserver import crdcel

        return errs + crdcel.rule_errors(schema, obj, old)

    def validate_create(self, obj: Obj, schemas: Schemas) -> list[FieldError]:
        errs = validate_object_meta(
            obj["metadata"],
            namespaced=self.rt.namespaced,
            name_fn=names.name_is_dns_subdomain,
            kube_finalizers=False,
        )
        return errs + self._schema_errors(obj)

    def validate_main_update(self, obj: Obj, old: Obj, schemas: Schemas) -> list[FieldError]:
        return self._update_errors(obj, old)

    def validate_status_update(self, obj: Obj, old: Obj) -> list[FieldError]:
        return self._update_errors(obj, old)

    def _update_errors(self, obj: Obj, old: Obj) -> list[FieldError]:
        errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
        errs.extend(validate_meta_content(obj["metadata"], kube_finalizers=False))
        return errs + self._schema_errors(obj, old)


def _drop_status(obj: Obj) -> None:
    """With a status subresource, create ignores the status sent."""
    obj.pop("status", None)


def _keep(obj: Obj) -> None:
    """Without one, status is an ordinary field."""


def custom_strategy(rt: ResourceType) -> CustomResourceStrategy:
    return CustomResourceStrategy(
        rt,
        prepare_for_create=_drop_status if rt.custom.status else _keep,
        scale=rt.custom.scale,
    )
