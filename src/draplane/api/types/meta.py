"""meta/v1 shapes every kind uses: ObjectMeta, OwnerReference, LabelSelector, Condition.

Like every module of `draplane.api.types`, these are TypedDicts (total=False) over the JSON
objects exactly as on the wire: the keys are the Go types' JSON field names, the values their
JSON types (`resource.Quantity` and `metav1.Time` are strings). They cost nothing at run time;
`tests/api/test_types.py` checks each against `draplane.api.schema`.
"""

from __future__ import annotations

from typing import Any, TypedDict


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str | None
    deletionTimestamp: str | None
    deletionGracePeriodSeconds: int
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    finalizers: list[str]
    managedFields: list[dict[str, Any]]


class LabelSelectorRequirement(TypedDict, total=False):
    key: str
    operator: str
    values: list[str]


class LabelSelector(TypedDict, total=False):
    matchLabels: dict[str, str]
    matchExpressions: list[LabelSelectorRequirement]


class Condition(TypedDict, total=False):
    type: str
    status: str
    observedGeneration: int
    lastTransitionTime: str | None
    reason: str
    message: str
