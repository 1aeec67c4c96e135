"""The store's errors as Kubernetes Status errors: `KeyNotFound` 404 NotFound, `KeyExists` 409
AlreadyExists, `RevisionConflict` 409 Conflict (with kube-apiserver's "the object has been
modified" text), `RevisionTooOld` 410 Expired."""

from __future__ import annotations

from draplane.api import errors
from draplane.api.kinds import ResourceType, for_key
from draplane.storage.errors import (
    KeyExists,
    KeyNotFound,
    RevisionConflict,
    RevisionTooOld,
    StorageError,
)


def _resource_type(resource: str) -> ResourceType:
    try:
        return for_key(resource)
    except KeyError:
        group, _, plural = resource.rpartition("/")
        return ResourceType(group, "", plural, "", True, plural)


def to_status(err: StorageError, rt: ResourceType | None = None) -> errors.StatusError:
    """The Status of `err`, naming `rt` (the version asked, when the store names its storage
    type: events.k8s.io/v1 Events are stored as core/v1 `events`) or the stored resource."""
    if isinstance(err, KeyNotFound):
        return errors.not_found(rt or _resource_type(err.resource), err.name)
    if isinstance(err, KeyExists):
        return errors.already_exists(rt or _resource_type(err.resource), err.name)
    if isinstance(err, RevisionConflict):
        return errors.conflict(rt or _resource_type(err.resource), err.name)
    if isinstance(err, RevisionTooOld):
        return errors.expired(str(err))
    return errors.internal(str(err))
