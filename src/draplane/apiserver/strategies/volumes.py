"""Declarations of core/v1 PersistentVolumes and PersistentVolumeClaims
(pkg/registry/core/persistentvolume, persistentvolumeclaim).

Both are created `Pending` (status reset, as PrepareForCreate and the v1 defaults make it) and
stay so: no controller binds claims to volumes or provisions them (docs/fidelity.md). Their
`status` subresource writes only the status. DELETE answers with the object, as both stores
return the deleted object.
"""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.api.validation import persistentvolume
from draplane.apiserver import volumeprinters
from draplane.apiserver.strategies import ResourceStrategy


def _pending(obj: Obj) -> None:
    obj["status"] = {"phase": "Pending"}


STRATEGIES = (
    ResourceStrategy(
        kinds.PERSISTENT_VOLUMES,
        validate=persistentvolume.validate_persistent_volume,
        validate_update=persistentvolume.validate_persistent_volume_update,
        validate_status=persistentvolume.validate_status_update,
        defaults=persistentvolume.default_persistent_volume,
        printer=volumeprinters.PERSISTENT_VOLUME,
        prepare_for_create=_pending,
        delete_returns_object=True,
    ),
    ResourceStrategy(
        kinds.PERSISTENT_VOLUME_CLAIMS,
        validate=persistentvolume.validate_persistent_volume_claim,
        validate_update=persistentvolume.validate_persistent_volume_claim_update,
        validate_status=persistentvolume.validate_status_update,
        defaults=persistentvolume.default_persistent_volume_claim,
        printer=volumeprinters.PERSISTENT_VOLUME_CLAIM,
        prepare_for_create=_pending,
        delete_returns_object=True,
    ),
)
