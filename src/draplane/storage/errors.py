"""The store's own errors: a key that is not there, a key that already is, a write whose
expected revision is not the stored one, and a revision older than the retained history. The
API server maps them to Kubernetes Status errors (404, 409 AlreadyExists, 409 Conflict, 410)."""

from __future__ import annotations


class StorageError(Exception):
    """Base of the store's key and revision errors."""


class KeyNotFound(StorageError):
    def __init__(self, resource: str, namespace: str, name: str) -> None:
        super().__init__(f"{resource} {namespace}/{name} not found")
        self.resource, self.namespace, self.name = resource, namespace, name


class KeyExists(StorageError):
    def __init__(self, resource: str, namespace: str, name: str) -> None:
        super().__init__(f"{resource} {namespace}/{name} already exists")
        self.resource, self.namespace, self.name = resource, namespace, name


class RevisionConflict(StorageError):
    """The stored object's revision is not the one the write expected."""

    def __init__(
        self, resource: str, namespace: str, name: str, expected: int, actual: int
    ) -> None:
        super().__init__(
            f"{resource} {namespace}/{name}: expected revision {expected}, stored {actual}"
        )
        self.resource, self.namespace, self.name = resource, namespace, name
        self.expected, self.actual = expected, actual


class RevisionTooOld(StorageError):
    """The revision is older than the retained history (etcd: compacted)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested, self.oldest = requested, oldest
